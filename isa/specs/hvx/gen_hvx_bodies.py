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

# ---------------------------------------------------------------- shifts by a scalar (count masked to the element)
for t in ("h", "w"):
    w = T[t][0]
    lg = {16: 4, 32: 5}[w]
    cnt = f"ZeroExtend{w}(rt[{lg - 1}:0])"
    add("shift", f"Q6_V{t}_vasl_V{t}R", loop(n_of(w), [f"{el('dst', w)} := {el('vu', w)} << {cnt}"]))
    add("shift", f"Q6_V{t}_vasr_V{t}R", loop(n_of(w), [f"{el('dst', w)} := {el('vu', w)} >>s {cnt}"]))
    add("shift", f"Q6_V{t}_vaslacc_V{t}V{t}R", loop(n_of(w), [f"{el('dst', w)} := {el('vx', w)} + ({el('vu', w)} << {cnt})"]))
    add("shift", f"Q6_V{t}_vasracc_V{t}V{t}R", loop(n_of(w), [f"{el('dst', w)} := {el('vx', w)} + ({el('vu', w)} >>s {cnt})"]))
for t in ("ub", "uh", "uw"):
    w = T[t][0]
    lg = {8: 3, 16: 4, 32: 5}[w]
    add("shift", f"Q6_V{t}_vlsr_V{t}R", loop(n_of(w), [f"{el('dst', w)} := {el('vu', w)} >>u ZeroExtend{w}(rt[{lg - 1}:0])"]))
# by a vector: the low log2(w)+1 bits of each count, signed; a negative
# count shifts the other way
for t in ("h", "w"):
    w = T[t][0]
    lg = {16: 4, 32: 5}[w]
    pre = [f"c := SignExtend{w}(vv[i*{w}+{lg}:i*{w}])", f"a := {el('vu', w)}"]
    add("shift", f"Q6_V{t}_vasl_V{t}V{t}", loop(n_of(w), pre + [f"{el('dst', w)} := c <s 0 ? a >>s (0 - c) : a << c"]))
    add("shift", f"Q6_V{t}_vasr_V{t}V{t}", loop(n_of(w), pre + [f"{el('dst', w)} := c <s 0 ? a << (0 - c) : a >>s c"]))
    add("shift", f"Q6_V{t}_vlsr_V{t}V{t}", loop(n_of(w), pre + [f"{el('dst', w)} := c <s 0 ? a << (0 - c) : a >>u c"]))
add("shift", "Q6_Vuw_vrotr_VuwVuw", loop(32, ["s := ZeroExtend32(vv[i*32+4:i*32])", "a := vu[i*32+31:i*32]", f"{el('dst', 32)} := (a >>u s) | (a << (32 - s))"]))

# ---------------------------------------------------------------- narrowing: shift, round, saturate, pack
# vasr(Vu, Vv, Rt): element i of the source pair's words/halves shifted
# right by Rt (masked), rounded and saturated; v's in the even half, u's odd.
for (dt, st, sfx, rnd, satf) in (
    ("h", "w", "", False, None), ("h", "w", "_sat", False, "s"), ("h", "w", "_rnd_sat", True, "s"),
    ("uh", "w", "_sat", False, "su"), ("uh", "w", "_rnd_sat", True, "su"), ("uh", "uw", "_sat", False, "su"), ("uh", "uw", "_rnd_sat", True, "su"),
    ("ub", "h", "_sat", False, "su"), ("ub", "h", "_rnd_sat", True, "su"), ("b", "h", "_sat", False, "s"), ("b", "h", "_rnd_sat", True, "s"),
    ("ub", "uh", "_sat", False, "su"), ("ub", "uh", "_rnd_sat", True, "su"),
):
    sw = T[st][0]
    dw = sw // 2
    mask_bits = {32: 4, 16: 3}[sw]
    body = [f"s := ZeroExtend64(rt[{mask_bits - 1}:0])"]
    for k, op in ((0, "vv"), (1, "vu")):
        x = ext(st, el(op, sw), 64)
        if rnd:
            x = f"({x} + (s == 0 ? ZeroExtend64(0) : ZeroExtend64(1) << (s - 1)))"
        shifted = f"({x} >>s s)"
        val = f"Truncate{dw}{shifted}" if satf is None else (f"SaturateS{dw}{shifted}" if satf == "s" else f"SaturateSU{dw}{shifted}")
        body.append(f"{el('dst', dw, 'i', k * dw, sw)} := {val}")
    add("narrow", f"Q6_V{dt}_vasr_V{st}V{st}R{sfx}", loop(n_of(sw), body))
# vround: add half of the dropped part, shift it off, saturate
for (dt, st) in (("h", "w"), ("uh", "w"), ("uh", "uw"), ("b", "h"), ("ub", "h"), ("ub", "uh")):
    sw = T[st][0]
    dw = sw // 2
    body = []
    for k, op in ((0, "vv"), (1, "vu")):
        x = f"(({ext(st, el(op, sw), 64)} + {1 << (dw - 1)}) >>s {dw})"
        body.append(f"{el('dst', dw, 'i', k * dw, sw)} := {sat(dt, x)}")
    add("narrow", f"Q6_V{dt}_vround_V{st}V{st}_sat", loop(n_of(sw), body))
# vsat: saturate and interleave
for (dt, st) in (("ub", "h"), ("h", "w"), ("uh", "uw")):
    sw = T[st][0]
    dw = sw // 2
    body = [f"{el('dst', dw, 'i', k * dw, sw)} := {sat(dt, ext(st, el(op, sw), 64))}" for k, op in ((0, "vv"), (1, "vu"))]
    add("narrow", f"Q6_V{dt}_vsat_V{st}V{st}", loop(n_of(sw), body))
add("narrow", "Q6_Vw_vsatdw_VwVw", loop(32, [f"{el('dst', 32)} := SaturateS32(Concat({el('vu', 32)}, {el('vv', 32)}))"]))
# vpack: even (e) or odd (o) halves of each element, v's first; or saturated
for (dt, st) in (("b", "h"), ("h", "w")):
    sw = T[st][0]
    dw = sw // 2
    n = n_of(sw)
    for nm, k in (("vpacke", 0), ("vpacko", 1)):
        add("pack", f"Q6_V{dt}_{nm}_V{st}V{st}", loop(n, [f"{el('dst', dw)} := {el('vv', dw, 'i', k * dw, sw)}", f"{el('dst', dw, 'i', n * dw)} := {el('vu', dw, 'i', k * dw, sw)}"]))
for (dt, st) in (("ub", "h"), ("b", "h"), ("uh", "w"), ("h", "w")):
    sw = T[st][0]
    dw = sw // 2
    n = n_of(sw)
    add("pack", f"Q6_V{dt}_vpack_V{st}V{st}_sat", loop(n, [f"{el('dst', dw)} := {sat(dt, el('vv', sw))}", f"{el('dst', dw, 'i', n * dw)} := {sat(dt, el('vu', sw))}"]))

# ---------------------------------------------------------------- widening: unpack, zxt/sxt
for (dt, st) in (("h", "b"), ("uh", "ub"), ("w", "h"), ("uw", "uh")):
    sw = T[st][0]
    dw = 2 * sw
    add("unpack", f"Q6_W{dt}_vunpack_V{st}", loop(n_of(sw), [f"{el('dst', dw)} := {ext(st, el('vu', sw), dw)}"]))
for (dt, st) in (("h", "b"), ("w", "h")):
    sw = T[st][0]
    dw = 2 * sw
    add("unpack", f"Q6_W{dt}_vunpackoor_W{dt}V{st}", loop(n_of(sw), [f"{el('dst', dw)} := {el('vxx', dw)} | (ZeroExtend{dw}({el('vu', sw)}) << {sw})"]))
for (dt, st, nm) in (("h", "b", "vsxt"), ("uh", "ub", "vzxt"), ("w", "h", "vsxt"), ("uw", "uh", "vzxt")):
    sw = T[st][0]
    dw = 2 * sw
    add("unpack", f"Q6_W{dt}_{nm}_V{st}", loop(n_of(dw), [f"{el('dst.' + h, dw)} := {ext(st, el('vu', sw, 'i', k * sw, dw), dw)}" for k, h in ((0, 'lo'), (1, 'hi'))]))

# ---------------------------------------------------------------- shuffles and deals
for t in ("b", "h"):
    w = T[t][0]
    n = n_of(2 * w)
    for nm, k in (("vshuffe", 0), ("vshuffo", 1)):
        add("shuffle", f"Q6_V{t}_{nm}_V{t}V{t}", loop(n, [f"{el('dst', w, 'i', 0, 2 * w)} := {el('vv', w, 'i', k * w, 2 * w)}", f"{el('dst', w, 'i', w, 2 * w)} := {el('vu', w, 'i', k * w, 2 * w)}"]))
    add("shuffle", f"Q6_W{t}_vshuffoe_V{t}V{t}", loop(n, [
        f"{el('dst.lo', w, 'i', 0, 2 * w)} := {el('vv', w, 'i', 0, 2 * w)}", f"{el('dst.lo', w, 'i', w, 2 * w)} := {el('vu', w, 'i', 0, 2 * w)}",
        f"{el('dst.hi', w, 'i', 0, 2 * w)} := {el('vv', w, 'i', w, 2 * w)}", f"{el('dst.hi', w, 'i', w, 2 * w)} := {el('vu', w, 'i', w, 2 * w)}"]))
    add("shuffle", f"Q6_V{t}_vshuff_V{t}", loop(n, [f"{el('dst', w, 'i', 0, 2 * w)} := {el('vu', w)}", f"{el('dst', w, 'i', w, 2 * w)} := {el('vu', w, 'i', n * w)}"]))
    add("shuffle", f"Q6_V{t}_vdeal_V{t}", loop(n, [f"{el('dst', w)} := {el('vu', w, 'i', 0, 2 * w)}", f"{el('dst', w, 'i', n * w)} := {el('vu', w, 'i', w, 2 * w)}"]))
add("shuffle", "Q6_Vb_vdeale_VbVb", loop(32, [f"{el('dst', 8)} := {el('vv', 8, 'i', 0, 32)}", f"{el('dst', 8, 'i', 256)} := {el('vv', 8, 'i', 16, 32)}",
                                              f"{el('dst', 8, 'i', 512)} := {el('vu', 8, 'i', 0, 32)}", f"{el('dst', 8, 'i', 768)} := {el('vu', 8, 'i', 16, 32)}"]))


def butterfly(offsets):
    """vshuff/vdeal(Vu, Vv, Rt): for each offset whose bit is set in Rt, swap
    hi.ub[k] with lo.ub[k+offset] for every k without that bit."""
    out = ["t := Concat(vu, vv)"]
    for off in offsets:
        lg = off.bit_length() - 1
        out.append(f"c := rt[{lg}]")
        out += loop(128, [f"IF (k AND {off}) == 0 THEN",
                          f"    a := t[1024+k*8+7:1024+k*8]", f"    b := t[(k+{off})*8+7:(k+{off})*8]",
                          f"    t[1024+k*8+7:1024+k*8] := c == 1 ? b : a", f"    t[(k+{off})*8+7:(k+{off})*8] := c == 1 ? a : b", "FI"], var="k")
    return out + ["dst := t"]


add("shuffle", "Q6_W_vshuff_VVR", butterfly([1, 2, 4, 8, 16, 32, 64]))
add("shuffle", "Q6_W_vdeal_VVR", butterfly([64, 32, 16, 8, 4, 2, 1]))


def benes(offsets):
    out = ["t := vu"]
    for off in offsets:
        lg = off.bit_length() - 1
        out.append("n := t")
        out += loop(128, [f"n[k*8+7:k*8] := vv[k*8+{lg}] == 1 ? t[(k XOR {off})*8+7:(k XOR {off})*8] : t[k*8+7:k*8]"], var="k")
        out.append("t := n")
    return out + ["dst := t"]


add("permute", "Q6_V_vdelta_VV", benes([64, 32, 16, 8, 4, 2, 1]))
add("permute", "Q6_V_vrdelta_VV", benes([1, 2, 4, 8, 16, 32, 64]))
# align: bytes of Concat(u, v) from a byte offset
add("permute", "Q6_V_valign_VVR", ["t := Concat(vu, vv)", "s := ZeroExtend16(rt[6:0])"] + loop(128, ["o := (s + i) * 8", f"{el('dst', 8)} := t[o+7:o]"]))
add("permute", "Q6_V_valign_VVI", ["t := Concat(vu, vv)", "s := ZeroExtend16(iu3)"] + loop(128, ["o := (s + i) * 8", f"{el('dst', 8)} := t[o+7:o]"]))
add("permute", "Q6_V_vlalign_VVR", ["t := Concat(vu, vv)", "s := 128 - ZeroExtend16(rt[6:0])"] + loop(128, ["o := (s + i) * 8", f"{el('dst', 8)} := t[o+7:o]"]))
add("permute", "Q6_V_vlalign_VVI", ["t := Concat(vu, vv)", "s := 128 - ZeroExtend16(iu3)"] + loop(128, ["o := (s + i) * 8", f"{el('dst', 8)} := t[o+7:o]"]))
add("permute", "Q6_V_vror_VR", ["t := Concat(vu, vu)", "s := ZeroExtend16(rt[6:0])"] + loop(128, ["o := (s + i) * 8", f"{el('dst', 8)} := t[o+7:o]"]))

# ---------------------------------------------------------------- table lookups
def lut32(sel, nomatch, acc):
    """Byte i: if the top 3 bits of u.ub[i] match, byte `odd` of v.h[idx % 64]."""
    lines = [f"m := {sel}[2:0]", f"odd := ZeroExtend16({sel}[1:1])"]
    body = [f"x := {el('vu', 8)}"]
    if nomatch:
        body += ["idx := Concat(m[0:0], x[4:0])", "o := (ZeroExtend16(idx) * 2 + odd) * 8", "r := vv[o+7:o]"]
    else:
        body += ["o := (ZeroExtend16(x[5:0]) * 2 + odd) * 8", "r := x[7:5] == m ? vv[o+7:o] : ZeroExtend8(0)"]
    body.append(f"{el('dst', 8)} := {el('vx', 8)} | r" if acc else f"{el('dst', 8)} := r")
    return lines + loop(128, body)


def lut16(sel, nomatch, acc):
    """Byte k of u.uh[i]: if its top 4 bits match, half `odd` of v.w[idx % 32] into the k-th half of the pair."""
    m = "ZeroExtend4(iu3)" if sel == "iu3" else f"{sel}[3:0]"
    lines = [f"m := {m}", f"odd := ZeroExtend16({sel}[1:1])"]
    body = []
    for k, h in ((0, "lo"), (1, "hi")):
        body.append(f"x{k} := {el('vu', 8, 'i', 8 * k, 16)}")
        if nomatch:
            body += [f"o{k} := (ZeroExtend16(Concat(m[0:0], x{k}[3:0])) * 2 + odd) * 16", f"r{k} := vv[o{k}+15:o{k}]"]
        else:
            body += [f"o{k} := (ZeroExtend16(x{k}[4:0]) * 2 + odd) * 16", f"r{k} := x{k}[7:4] == m ? vv[o{k}+15:o{k}] : ZeroExtend16(0)"]
        body.append(f"{el('dst.' + h, 16)} := {el('vxx.' + h, 16)} | r{k}" if acc else f"{el('dst.' + h, 16)} := r{k}")
    return lines + loop(64, body)


add("lut", "Q6_Vb_vlut32_VbVbR", lut32("rt", False, False))
add("lut", "Q6_Vb_vlut32_VbVbI", lut32("iu3", False, False))
add("lut", "Q6_Vb_vlut32_VbVbR_nomatch", lut32("rt", True, False))
add("lut", "Q6_Vb_vlut32or_VbVbVbR", lut32("rt", False, True))
add("lut", "Q6_Vb_vlut32or_VbVbVbI", lut32("iu3", False, True))
add("lut", "Q6_Wh_vlut16_VbVhR", lut16("rt", False, False))
add("lut", "Q6_Wh_vlut16_VbVhI", lut16("iu3", False, False))
add("lut", "Q6_Wh_vlut16_VbVhR_nomatch", lut16("rt", True, False))
add("lut", "Q6_Wh_vlut16or_WhVbVhR", lut16("rt", False, True))
add("lut", "Q6_Wh_vlut16or_WhVbVhI", lut16("iu3", False, True))
add("lut", "Q6_Vh_vlut4_VuhPh", loop(64, ["o := ZeroExtend8(vu[i*16+15:i*16+14]) * 16", f"{el('dst', 16)} := rtt[o+15:o]"]))

# ---------------------------------------------------------------- bit counts
add("bits", "Q6_Vuh_vcl0_Vuh", loop(64, [f"{el('dst', 16)} := Clz16({el('vu', 16)})"]))
add("bits", "Q6_Vuw_vcl0_Vuw", loop(32, [f"{el('dst', 32)} := Clz32({el('vu', 32)})"]))
add("bits", "Q6_Vh_vnormamt_Vh", loop(64, ["a := " + el("vu", 16), f"{el('dst', 16)} := Clb16(a) - 1"]))
add("bits", "Q6_Vw_vnormamt_Vw", loop(32, ["a := " + el("vu", 32), f"{el('dst', 32)} := Clb32(a) - 1"]))
add("bits", "Q6_Vh_vadd_vclb_VhVh", loop(64, [f"{el('dst', 16)} := Clb16({el('vu', 16)}) + {el('vv', 16)}"]))
add("bits", "Q6_Vw_vadd_vclb_VwVw", loop(32, [f"{el('dst', 32)} := Clb32({el('vu', 32)}) + {el('vv', 32)}"]))
add("bits", "Q6_Vh_vpopcount_Vh", loop(64, ["a := " + el("vu", 16), "s := ZeroExtend16(0)"] + loop(16, ["s := s + ZeroExtend16(a[b])"], var="b") + [f"{el('dst', 16)} := s"]))

# Shared functions, written to common.sema.
DEFS = """def Clz16(x: bv16) -> bv16
r := ZeroExtend16(16)
FOR b := 0 to 15
    r := x[b] == 1 ? ZeroExtend16(15 - b) : r
ENDFOR
RETURN r

def Clz32(x: bv32) -> bv32
r := ZeroExtend32(32)
FOR b := 0 to 31
    r := x[b] == 1 ? ZeroExtend32(31 - b) : r
ENDFOR
RETURN r

// Count of leading bits equal to the sign bit (the manual's max(cl0, cl1)).
def Clb16(x: bv16) -> bv16
RETURN x[15] == 1 ? Clz16(NOT x) : Clz16(x)

def Clb32(x: bv32) -> bv32
RETURN x[31] == 1 ? Clz32(NOT x) : Clz32(x)
"""

# ---------------------------------------------------------------- v66
add("add_sat", "Q6_Vw_vadd_VwVwQ_carry_sat", loop(32, [f"{el('dst', 32)} := SaturateS32(SignExtend64({el('vu', 32)}) + SignExtend64({el('vv', 32)}) + ZeroExtend64(qs[i*4]))"]))
# vasrinto: shift u (placed in the high word of 64 bits) right by a signed
# 7-bit count, the vacated bits filled from the old lo word of the pair
add("shift", "Q6_Ww_vasrinto_WwVwVw", loop(32, [
    f"s := Concat({el('vu', 32)}, ZeroExtend32(0))",
    f"m := Concat({el('vxx.lo', 32)}, {el('vxx.lo', 32)})",
    "lm := ZeroExtend64(4294967295)",
    f"c := SignExtend64(vv[i*32+6:i*32])",
    "r := c == -64 ? ZeroExtend64(0) : (c <s 0 ? (s << (0 - c)) | (m & (lm << (0 - c))) : (s >>s c) | (m & (lm >>u c)))",
    f"{el('dst.hi', 32)} := r[63:32]",
    f"{el('dst.lo', 32)} := r[31:0]"]))
