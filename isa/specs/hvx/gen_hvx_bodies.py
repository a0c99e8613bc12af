"""Semantics of the HVX instruction shapes, for gen_hvx.py.

Each entry maps an intrinsic to its body in the semantics language; operand
names are the header's, lower-cased (vu, vv, vx, vuu, vvv, vxx, rt, rtt, qv,
qs, qt, qx, qu, iu1, iu3). A vector is bv1024; a pair (`pair1024`) is read
and written through its halves `.lo` (the manual's Vdd.v[0]) and `.hi`
(Vdd.v[1]); a predicate (`pred128`) has one bit per byte. `i` runs over the
elements of the width the manual's loop uses.
"""

BODIES = {}
FAMILY = {}

T = {"b": (8, True), "ub": (8, False), "h": (16, True), "uh": (16, False), "w": (32, True), "uw": (32, False)}
W = {8: "b", 16: "h", 32: "w"}


def add(family, name, lines):
    assert name not in BODIES, name
    BODIES[name] = "\n".join(lines) + "\n"
    FAMILY[name] = family


def ext(t, x, wide):
    return f"{'SignExtend' if T[t][1] else 'ZeroExtend'}{wide}({x})"


def el(op, w, idx="i", off=0, stride=None):
    """Bits of width `w` at element `idx` (elements `stride` bits apart), plus `off` bits."""
    s = stride or w
    o = f"+{off}" if off else ""
    return f"{op}[{idx}*{s}+{off + w - 1}:{idx}*{s}{o}]"


def byte_of(op, k):
    return f"{op}[{k}*8+7:{k}*8]"


def loop(n, body, var="i"):
    return [f"FOR {var} := 0 to {n - 1}"] + ["    " + l for l in body] + ["ENDFOR"]


def n_of(w):
    return 1024 // w


def sat(t, x, signed_in=True):
    """Saturate a wide signed value to element type t."""
    w, s = T[t]
    if s:
        return f"SaturateS{w}({x})"
    return f"SaturateSU{w}({x})" if signed_in else f"SaturateU{w}({x})"


def cmp_gt(t):
    return ">s" if T[t][1] else ">u"


def cmp_lt(t):
    return "<s" if T[t][1] else "<u"


# ---------------------------------------------------------------- add / sub
for op, sym in (("vadd", "+"), ("vsub", "-")):
    for t in ("b", "h", "w"):
        w = T[t][0]
        add("add", f"Q6_V{t}_{op}_V{t}V{t}", loop(n_of(w), [f"{el('dst', w)} := {el('vu', w)} {sym} {el('vv', w)}"]))
        add("add", f"Q6_W{t}_{op}_W{t}W{t}", loop(n_of(w), [f"{el('dst.' + h, w)} := {el('vuu.' + h, w)} {sym} {el('vvv.' + h, w)}" for h in ("lo", "hi")]))
    for t in ("b", "ub", "h", "uh", "w", "uw"):
        w, s = T[t]
        x = lambda a, b: sat(t, f"{ext(t, a, 2 * w)} {sym} {ext(t, b, 2 * w)}")
        add("add_sat", f"Q6_V{t}_{op}_V{t}V{t}_sat", loop(n_of(w), [f"{el('dst', w)} := {x(el('vu', w), el('vv', w))}"]))
        add("add_sat", f"Q6_W{t}_{op}_W{t}W{t}_sat", loop(n_of(w), [f"{el('dst.' + h, w)} := {x(el('vuu.' + h, w), el('vvv.' + h, w))}" for h in ("lo", "hi")]))
    # ub op b, saturated to ub
    add("add_sat", f"Q6_Vub_{op}_VubVb_sat", loop(128, [f"{el('dst', 8)} := SaturateSU8(ZeroExtend16({el('vu', 8)}) {sym} SignExtend16({el('vv', 8)}))"]))
    # widening into a pair: even elements to lo, odd to hi
    for (dt, st) in (("h", "ub"), ("w", "h"), ("w", "uh")):
        dw, sw = T[dt][0], T[st][0]
        lines = []
        for k, h in ((0, "lo"), (1, "hi")):
            a = ext(st, el("vu", sw, "i", k * sw, dw), dw)
            b = ext(st, el("vv", sw, "i", k * sw, dw), dw)
            lines.append(f"{el('dst.' + h, dw)} := {a} {sym} {b}")
        add("add_wide", f"Q6_W{dt}_{op}_V{st}V{st}", loop(n_of(dw), lines))
        if op == "vadd":
            acc = [l.replace(":= ", ":= " + el("vxx." + h, dw) + " + (", 1) + ")" for l, h in zip(lines, ("lo", "hi"))]
            add("add_wide", f"Q6_W{dt}_vaddacc_W{dt}V{st}V{st}", loop(n_of(dw), acc))
    # conditional accumulate: byte k of each element follows predicate bit k
    for t in ("b", "h", "w"):
        w = T[t][0]
        for neg in (False, True):
            q = "Qn" if neg else "Q"
            nm = "condacc" if op == "vadd" else "condnac"
            lines = [f"r := {el('vx', w)} {sym} {el('vu', w)}"]
            for k in range(w // 8):
                keep, new = el("vx", 8, "i", 8 * k, w), f"r[{8 * k + 7}:{8 * k}]"
                yes, no = (keep, new) if neg else (new, keep)
                lines.append(f"{el('dst', 8, 'i', 8 * k, w)} := qv[i*{w // 8}+{k}] ? {yes} : {no}")
            add("add_cond", f"Q6_V{t}_{nm}_{q}V{t}V{t}", loop(n_of(w), lines))

# ---------------------------------------------------------------- abs, absdiff, avg, navg, min/max
for t in ("b", "h", "w"):
    w = T[t][0]
    x = el("vu", w)
    add("abs", f"Q6_V{t}_vabs_V{t}", loop(n_of(w), [f"{el('dst', w)} := {x} <s 0 ? 0 - {x} : {x}"]))
    add("abs", f"Q6_V{t}_vabs_V{t}_sat", loop(n_of(w), [f"a := SignExtend{2 * w}({x})", f"{el('dst', w)} := SaturateS{w}(a <s 0 ? 0 - a : a)"]))
for (dt, st) in (("ub", "ub"), ("uh", "uh"), ("uh", "h"), ("uw", "w")):
    w = T[st][0]
    a, b = el("vu", w), el("vv", w)
    add("absdiff", f"Q6_V{dt}_vabsdiff_V{st}V{st}", loop(n_of(w), [f"{el('dst', w)} := {a} {cmp_gt(st)} {b} ? {a} - {b} : {b} - {a}"]))
for t in ("ub", "uh", "uw", "b", "h", "w"):
    w = T[t][0]
    s = "s" if T[t][1] else "u"
    a, b = ext(t, el("vu", w), w + 1), ext(t, el("vv", w), w + 1)
    add("avg", f"Q6_V{t}_vavg_V{t}V{t}", loop(n_of(w), [f"{el('dst', w)} := Truncate{w}(({a} + {b}) >>{s} 1)"]))
    add("avg", f"Q6_V{t}_vavg_V{t}V{t}_rnd", loop(n_of(w), [f"{el('dst', w)} := Truncate{w}(({a} + {b} + 1) >>{s} 1)"]))
for (dt, st) in (("b", "ub"), ("b", "b"), ("h", "h"), ("w", "w")):
    w = T[st][0]
    a, b = ext(st, el("vu", w), w + 2), ext(st, el("vv", w), w + 2)
    add("avg", f"Q6_V{dt}_vnavg_V{st}V{st}", loop(n_of(w), [f"{el('dst', w)} := Truncate{w}(({a} - {b}) >>s 1)"]))
for t in ("b", "ub", "h", "uh", "w"):
    w = T[t][0]
    a, b = el("vu", w), el("vv", w)
    add("minmax", f"Q6_V{t}_vmax_V{t}V{t}", loop(n_of(w), [f"{el('dst', w)} := {a} {cmp_gt(t)} {b} ? {a} : {b}"]))
    add("minmax", f"Q6_V{t}_vmin_V{t}V{t}", loop(n_of(w), [f"{el('dst', w)} := {a} {cmp_lt(t)} {b} ? {a} : {b}"]))

# ---------------------------------------------------------------- compares into predicates
for t in ("b", "h", "w", "ub", "uh", "uw"):
    w = T[t][0]
    nb = w // 8
    ops = [("gt", cmp_gt(t))] + ([("eq", "==")] if T[t][1] else [])
    for nm, c in ops:
        cond = f"{el('vu', w)} {c} {el('vv', w)}"
        bits = f"dst[i*{nb}+{nb - 1}:i*{nb}]"
        qx = f"qx[i*{nb}+{nb - 1}:i*{nb}]"
        m = (1 << nb) - 1
        add("cmp", f"Q6_Q_vcmp_{nm}_V{t}V{t}", loop(n_of(w), [f"{bits} := {cond} ? {m} : 0"]))
        for acc, sym in (("and", "&"), ("or", "|"), ("xacc", "^")):
            add("cmp", f"Q6_Q_vcmp_{nm}{acc}_QV{t}V{t}", loop(n_of(w), [f"{bits} := {qx} {sym} ({cond} ? ZeroExtend{nb}({m}) : ZeroExtend{nb}(0))"]))

# ---------------------------------------------------------------- logic and predicates
for nm, sym in (("vand", "AND"), ("vor", "OR"), ("vxor", "XOR")):
    add("logic", f"Q6_V_{nm}_VV", [f"dst := vu {sym} vv"])
add("logic", "Q6_V_vnot_V", ["dst := NOT vu"])
add("logic", "Q6_Q_and_QQ", ["dst := qs AND qt"])
add("logic", "Q6_Q_or_QQ", ["dst := qs OR qt"])
add("logic", "Q6_Q_xor_QQ", ["dst := qs XOR qt"])
add("logic", "Q6_Q_and_QQn", ["dst := qs AND NOT qt"])
add("logic", "Q6_Q_or_QQn", ["dst := qs OR NOT qt"])
add("logic", "Q6_Q_not_Q", ["dst := NOT qs"])
add("logic", "Q6_V_vand_QR", loop(128, ["k := i %u 4", f"{el('dst', 8)} := qu[i] ? rt[k*8+7:k*8] : 0"]))
add("logic", "Q6_V_vand_QnR", loop(128, ["k := i %u 4", f"{el('dst', 8)} := qu[i] ? 0 : rt[k*8+7:k*8]"]))
add("logic", "Q6_V_vandor_VQR", loop(128, ["k := i %u 4", f"{el('dst', 8)} := {el('vx', 8)} | (qu[i] ? rt[k*8+7:k*8] : 0)"]))
add("logic", "Q6_V_vandor_VQnR", loop(128, ["k := i %u 4", f"{el('dst', 8)} := {el('vx', 8)} | (qu[i] ? 0 : rt[k*8+7:k*8])"]))
add("logic", "Q6_Q_vand_VR", loop(128, ["k := i %u 4", f"dst[i] := ({el('vu', 8)} & rt[k*8+7:k*8]) != 0"]))
add("logic", "Q6_Q_vandor_QVR", loop(128, ["k := i %u 4", f"dst[i] := qx[i] | (({el('vu', 8)} & rt[k*8+7:k*8]) != 0)"]))
add("logic", "Q6_V_vand_QV", loop(128, [f"{el('dst', 8)} := qv[i] ? {el('vu', 8)} : 0"]))
add("logic", "Q6_V_vand_QnV", loop(128, [f"{el('dst', 8)} := qv[i] ? 0 : {el('vu', 8)}"]))
add("logic", "Q6_V_vmux_QVV", loop(128, [f"{el('dst', 8)} := qt[i] ? {el('vu', 8)} : {el('vv', 8)}"]))
add("logic", "Q6_W_vswap_QVV", loop(128, [f"{el('dst.lo', 8)} := qt[i] ? {el('vu', 8)} : {el('vv', 8)}", f"{el('dst.hi', 8)} := qt[i] ? {el('vv', 8)} : {el('vu', 8)}"]))
add("logic", "Q6_Q_vsetq_R", ["n := ZeroExtend8(rt[6:0])"] + loop(128, ["dst[i] := ZeroExtend8(i) <u n"]))
add("logic", "Q6_Q_vsetq2_R", ["n := ZeroExtend8((rt - 1)[6:0])"] + loop(128, ["dst[i] := ZeroExtend8(i) <=u n"]))
add("logic", "Q6_Qb_vshuffe_QhQh", loop(64, ["dst[2*i] := qt[2*i]", "dst[2*i+1] := qs[2*i]"]))
add("logic", "Q6_Qh_vshuffe_QwQw", loop(32, ["dst[4*i+1:4*i] := qt[4*i+1:4*i]", "dst[4*i+3:4*i+2] := qs[4*i+1:4*i]"]))
add("logic", "Q6_Vb_prefixsum_Q", ["s := ZeroExtend8(0)"] + loop(128, ["s := s + ZeroExtend8(qv[i])", f"{el('dst', 8)} := s"]))
add("logic", "Q6_Vh_prefixsum_Q", ["s := ZeroExtend16(0)"] + loop(64, ["s := s + ZeroExtend16(qv[2*i]) + ZeroExtend16(qv[2*i+1])", f"{el('dst', 16)} := s"]))
add("logic", "Q6_Vw_prefixsum_Q", ["s := ZeroExtend32(0)"] + loop(32, ["s := s + ZeroExtend32(qv[4*i]) + ZeroExtend32(qv[4*i+1]) + ZeroExtend32(qv[4*i+2]) + ZeroExtend32(qv[4*i+3])", f"{el('dst', 32)} := s"]))

# ---------------------------------------------------------------- moves, splats, pairs
add("move", "Q6_V_vzero", ["dst := ZeroExtend1024(0)"])
add("move", "Q6_W_vzero", ["dst := ZeroExtend2048(0)"])
add("move", "Q6_V_equals_V", ["dst := vu"])
add("move", "Q6_W_equals_W", ["dst := vuu"])
add("move", "Q6_V_hi_W", ["dst := vss.hi"])
add("move", "Q6_V_lo_W", ["dst := vss.lo"])
add("move", "Q6_W_vcombine_VV", ["dst.lo := vv", "dst.hi := vu"])
add("move", "Q6_V_vsplat_R", loop(32, [f"{el('dst', 32)} := rt"]))
add("move", "Q6_Vh_vsplat_R", loop(64, [f"{el('dst', 16)} := rt[15:0]"]))
add("move", "Q6_Vb_vsplat_R", loop(128, [f"{el('dst', 8)} := rt[7:0]"]))
add("move", "Q6_R_vextract_VR", ["o := ZeroExtend16(rs[6:2]) * 32", "dst := vu[o+31:o]"])
add("move", "Q6_Vw_vinsert_VwR", ["dst[31:0] := rt", "dst[1023:32] := vx[1023:32]"])
