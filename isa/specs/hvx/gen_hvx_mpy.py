"""Semantics of the HVX multiplies, dot products and sums of absolute
differences, for gen_hvx.py (after the manual's pseudocode: products are
exact, then wrap or saturate to the destination element)."""

from gen_hvx_bodies import T, add, el, ext, loop

HALVES = (("lo", 0), ("hi", 1))


def rb(k, w=8):
    """Element `k` (a compile-time expression) of the scalar rt."""
    return f"rt[({k})*{w}+{w - 1}:({k})*{w}]"


def mul(ta, a, tb, b, w):
    return f"{ext(ta, a, w)} * {ext(tb, b, w)}"


def acc_of(lines, prev):
    """`dst.. := e` lines -> `dst.. := prev + (e)` with prev's matching element."""
    out = []
    for l in lines:
        lhs, rhs = l.split(" := ", 1)
        out.append(f"{lhs} := {lhs.replace('dst', prev, 1)} + ({rhs})")
    return out


def both(fam, name, accname, n, lines, prev, pre=()):
    add(fam, name, loop(n, list(pre) + lines))
    if accname:
        add(fam, accname, loop(n, list(pre) + acc_of(lines, prev)))


# ---------------------------------------------------------------- byte multiplies into halfword pairs
for (dt, ta, tb, sfx, scalar) in (
    ("h", "ub", "b", "VubRb", True), ("uh", "ub", "ub", "VubRub", True),
    ("h", "b", "b", "VbVb", False), ("uh", "ub", "ub", "VubVub", False), ("h", "ub", "b", "VubVb", False),
):
    lines = []
    for h, k in HALVES:
        a = el("vu", 8, "i", 8 * k, 16)
        b = rb(f"(2*i+{k}) %u 4") if scalar else el("vv", 8, "i", 8 * k, 16)
        lines.append(f"{el('dst.' + h, 16)} := {mul(ta, a, tb, b, 16)}")
    accname = f"Q6_W{dt}_vmpyacc_W{dt}{sfx}"
    both("mpy", f"Q6_W{dt}_vmpy_{sfx}", accname, 64, lines, "vxx")
# vmpa of two pairs: products of the lo and hi registers' bytes, summed
for (tb, sfx) in (("b", "WubWb"), ("ub", "WubWub")):
    lines = []
    for h, k in HALVES:
        p0 = mul("ub", el("vuu.lo", 8, "i", 8 * k, 16), tb, el("vvv.lo", 8, "i", 8 * k, 16), 16)
        p1 = mul("ub", el("vuu.hi", 8, "i", 8 * k, 16), tb, el("vvv.hi", 8, "i", 8 * k, 16), 16)
        lines.append(f"{el('dst.' + h, 16)} := {p0} + {p1}")
    add("mpa", f"Q6_Wh_vmpa_{sfx}", loop(64, lines))
# vmpa of a pair by scalar bytes: lo takes rt bytes 0,1 and hi bytes 2,3
for (dt, st, tb, sfx) in (("h", "ub", "b", "WubRb"), ("h", "ub", "ub", "WubRub"), ("w", "h", "b", "WhRb"), ("w", "uh", "b", "WuhRb")):
    sw, dw = T[st][0], 2 * T[st][0]
    lines = []
    for h, k in HALVES:
        p0 = mul(st, el("vuu.lo", sw, "i", sw * k, dw), tb, rb(2 * k), dw)
        p1 = mul(st, el("vuu.hi", sw, "i", sw * k, dw), tb, rb(2 * k + 1), dw)
        lines.append(f"{el('dst.' + h, dw)} := {p0} + {p1}")
    both("mpa", f"Q6_W{dt}_vmpa_{sfx}", f"Q6_W{dt}_vmpaacc_W{dt}{sfx}", 1024 // dw, lines, "vxx")

# ---------------------------------------------------------------- halfword multiplies into word pairs
for (dt, ta, tb, sfx, scalar, acc) in (
    ("w", "h", "h", "VhRh", True, True), ("uw", "uh", "uh", "VuhRuh", True, True),
    ("w", "h", "uh", "VhVuh", False, True), ("w", "h", "h", "VhVh", False, True), ("uw", "uh", "uh", "VuhVuh", False, True),
):
    lines = []
    for h, k in HALVES:
        b = rb(k, 16) if scalar else el("vv", 16, "i", 16 * k, 32)
        lines.append(f"{el('dst.' + h, 32)} := {mul(ta, el('vu', 16, 'i', 16 * k, 32), tb, b, 32)}")
    both("mpy", f"Q6_W{dt}_vmpy_{sfx}", f"Q6_W{dt}_vmpyacc_W{dt}{sfx}", 32, lines, "vxx")
add("mpy", "Q6_Ww_vmpyacc_WwVhRh_sat", loop(32, [
    f"{el('dst.' + h, 32)} := SaturateS32(SignExtend64({el('vxx.' + h, 32)}) + {mul('h', el('vu', 16, 'i', 16 * k, 32), 'h', rb(k, 16), 64)})" for h, k in HALVES]))
# fractional: (a*b << 1), saturated to 32 bits, high half; optionally rounded
for rnd in (False, True):
    r = " + 32768" if rnd else ""
    sfx = "_s1_rnd_sat" if rnd else "_s1_sat"
    add("mpy_frac", f"Q6_Vh_vmpy_VhRh{sfx}", loop(32, [
        f"{el('dst', 16, 'i', 16 * k, 32)} := SaturateS32(({mul('h', el('vu', 16, 'i', 16 * k, 32), 'h', rb(k, 16), 64)}) * 2{r})[31:16]" for _, k in HALVES]))
add("mpy_frac", "Q6_Vh_vmpy_VhVh_s1_rnd_sat", loop(64, [f"{el('dst', 16)} := SaturateS32(({mul('h', el('vu', 16), 'h', el('vv', 16), 64)}) * 2 + 32768)[31:16]"]))

# ---------------------------------------------------------------- integer (low-part) multiplies
both("mpyi", "Q6_Vh_vmpyi_VhVh", "Q6_Vh_vmpyiacc_VhVhVh", 64, [f"{el('dst', 16)} := {el('vu', 16)} * {el('vv', 16)}"], "vx")
both("mpyi", "Q6_Vh_vmpyi_VhRb", "Q6_Vh_vmpyiacc_VhVhRb", 64, [f"{el('dst', 16)} := {el('vu', 16)} * SignExtend16({rb('i %u 4')})"], "vx")
both("mpyi", "Q6_Vw_vmpyi_VwRb", "Q6_Vw_vmpyiacc_VwVwRb", 32, [f"{el('dst', 32)} := {el('vu', 32)} * SignExtend32({rb('i %u 4')})"], "vx")
both("mpyi", "Q6_Vw_vmpyi_VwRub", "Q6_Vw_vmpyiacc_VwVwRub", 32, [f"{el('dst', 32)} := {el('vu', 32)} * ZeroExtend32({rb('i %u 4')})"], "vx")
both("mpyi", "Q6_Vw_vmpyi_VwRh", "Q6_Vw_vmpyiacc_VwVwRh", 32, [f"{el('dst', 32)} := {el('vu', 32)} * SignExtend32({rb('i %u 2', 16)})"], "vx")
add("mpyi", "Q6_Vw_vmpyieo_VhVh", loop(32, [f"{el('dst', 32)} := ({mul('h', el('vu', 16, 'i', 0, 32), 'h', el('vv', 16, 'i', 16, 32), 32)}) << 16"]))
both("mpyi", "Q6_Vw_vmpyie_VwVuh", "Q6_Vw_vmpyieacc_VwVwVuh", 32, [f"{el('dst', 32)} := {el('vu', 32)} * ZeroExtend32({el('vv', 16, 'i', 0, 32)})"], "vx")
add("mpyi", "Q6_Vw_vmpyieacc_VwVwVh", loop(32, [f"{el('dst', 32)} := {el('vx', 32)} + {el('vu', 32)} * SignExtend32({el('vv', 16, 'i', 0, 32)})"]))
add("mpyi", "Q6_Vw_vmpyio_VwVh", loop(32, [f"{el('dst', 32)} := {el('vu', 32)} * SignExtend32({el('vv', 16, 'i', 16, 32)})"]))
both("mpyi", "Q6_Vuw_vmpye_VuhRuh", "Q6_Vuw_vmpyeacc_VuwVuhRuh", 32, [f"{el('dst', 32)} := {mul('uh', el('vu', 16, 'i', 0, 32), 'uh', rb(0, 16), 32)}"], "vx")

# ---------------------------------------------------------------- word by halfword (32x16) products
WE = mul("w", el("vu", 32), "uh", el("vv", 16, "i", 0, 32), 64)  # even uh, unsigned
WO = mul("w", el("vu", 32), "h", el("vv", 16, "i", 16, 32), 64)  # odd h, signed
add("mpy32", "Q6_Vw_vmpye_VwVuh", loop(32, [f"{el('dst', 32)} := (({WE}) >>s 16)[31:0]"]))
for rnd in (0, 1):
    sfx = "_s1_rnd_sat" if rnd else "_s1_sat"
    add("mpy32", f"Q6_Vw_vmpyo_VwVh{sfx}", loop(32, [f"{el('dst', 32)} := SaturateS32(((({WO}) >>s 14) + {rnd}) >>s 1)"]))
    add("mpy32", f"Q6_Vw_vmpyoacc_VwVwVh{sfx}_shift", loop(32, [f"{el('dst', 32)} := SaturateS32((((SignExtend64({el('vx', 32)}) + {WO}) >>s 14) + {rnd}) >>s 1)"]))
add("mpy32", "Q6_W_vmpye_VwVuh", loop(32, [f"p := {WE}", f"{el('dst.hi', 32)} := p[47:16]", f"{el('dst.lo', 32)} := Concat(p[15:0], ZeroExtend16(0))"]))
add("mpy32", "Q6_W_vmpyoacc_WVwVh", loop(32, [f"p := {WO} + SignExtend64({el('vxx.hi', 32)})", f"{el('dst.hi', 32)} := p[47:16]",
                                             f"{el('dst.lo', 32)} := Concat(p[15:0], {el('vxx.lo', 16, 'i', 16, 32)})"]))

# ---------------------------------------------------------------- piecewise-linear (v65): table entry chosen by the top two bits of u
X, U = el("vx", 16), el("vu", 16)
SEL = "o := ZeroExtend8(vu[i*16+15:i*16+14]) * 16"
add("mpa_nl", "Q6_Vh_vmpa_VhVhVhPh_sat", loop(64, [SEL, f"{el('dst', 16)} := SaturateS16((({mul('h', X, 'h', U, 64)}) * 2 + (SignExtend64(rtt[o+15:o]) << 15)) >>s 16)"]))
add("mpa_nl", "Q6_Vh_vmpa_VhVhVuhPuh_sat", loop(64, [SEL, f"{el('dst', 16)} := SaturateS16(({mul('h', X, 'uh', U, 64)} + (ZeroExtend64(rtt[o+15:o]) << 15)) >>s 16)"]))
add("mpa_nl", "Q6_Vh_vmps_VhVhVuhPuh_sat", loop(64, [SEL, f"{el('dst', 16)} := SaturateS16(({mul('h', X, 'uh', U, 64)} - (ZeroExtend64(rtt[o+15:o]) << 15)) >>s 16)"]))

# ---------------------------------------------------------------- dual multiplies (vdmpy)
K0, K1 = "(2*i) %u 4", "(2*i+1) %u 4"
for (st, dt, sfx) in (("ub", "h", "VubRb"), ("h", "w", "VhRb")):
    sw, dw = T[st][0], 2 * T[st][0]
    a0, a1 = el("vu", sw, "i", 0, dw), el("vu", sw, "i", sw, dw)
    line = f"{el('dst', dw)} := {mul(st, a0, 'b', rb(K0), dw)} + {mul(st, a1, 'b', rb(K1), dw)}"
    both("dmpy", f"Q6_V{dt}_vdmpy_{sfx}", f"Q6_V{dt}_vdmpyacc_V{dt}{sfx}", 1024 // dw, [line], "vx")
    # the pair form slides a window over lo and hi
    lo0, lo1, hi0 = el("vuu.lo", sw, "i", 0, dw), el("vuu.lo", sw, "i", sw, dw), el("vuu.hi", sw, "i", 0, dw)
    lines = [f"{el('dst.lo', dw)} := {mul(st, lo0, 'b', rb(K0), dw)} + {mul(st, lo1, 'b', rb(K1), dw)}",
             f"{el('dst.hi', dw)} := {mul(st, lo1, 'b', rb(K0), dw)} + {mul(st, hi0, 'b', rb(K1), dw)}"]
    psfx = "W" + sfx[1:]
    both("dmpy", f"Q6_W{dt}_vdmpy_{psfx}", f"Q6_W{dt}_vdmpyacc_W{dt}{psfx}", 1024 // dw, lines, "vxx")
# saturating halfword dot products into words
H0, H1 = el("vu", 16, "i", 0, 32), el("vu", 16, "i", 16, 32)
P0, P1 = el("vuu.lo", 16, "i", 16, 32), el("vuu.hi", 16, "i", 0, 32)
for (sfx, a, b) in (
    ("VhVh", (("h", H0), ("h", H1)), (("h", el("vv", 16, "i", 0, 32)), ("h", el("vv", 16, "i", 16, 32)))),
    ("VhRh", (("h", H0), ("h", H1)), (("h", rb(0, 16)), ("h", rb(1, 16)))),
    ("WhRh", (("h", P0), ("h", P1)), (("h", rb(0, 16)), ("h", rb(1, 16)))),
    ("VhRuh", (("h", H0), ("h", H1)), (("uh", rb(0, 16)), ("uh", rb(1, 16)))),
    ("WhRuh", (("h", P0), ("h", P1)), (("uh", rb(0, 16)), ("uh", rb(1, 16)))),
):
    s = f"{mul(a[0][0], a[0][1], b[0][0], b[0][1], 64)} + {mul(a[1][0], a[1][1], b[1][0], b[1][1], 64)}"
    add("dmpy", f"Q6_Vw_vdmpy_{sfx}_sat", loop(32, [f"{el('dst', 32)} := SaturateS32({s})"]))
    add("dmpy", f"Q6_Vw_vdmpyacc_Vw{sfx}_sat", loop(32, [f"{el('dst', 32)} := SaturateS32(SignExtend64({el('vx', 32)}) + {s})"]))

# ---------------------------------------------------------------- triple multiplies (vtmpy): two products and the next element
for (st, dt, sfx) in (("b", "h", "WbRb"), ("ub", "h", "WubRb"), ("h", "w", "WhRb")):
    sw, dw = T[st][0], 2 * T[st][0]
    lo0, lo1 = el("vuu.lo", sw, "i", 0, dw), el("vuu.lo", sw, "i", sw, dw)
    hi0, hi1 = el("vuu.hi", sw, "i", 0, dw), el("vuu.hi", sw, "i", sw, dw)
    lines = [f"{el('dst.lo', dw)} := {mul(st, lo0, 'b', rb(K0), dw)} + {mul(st, lo1, 'b', rb(K1), dw)} + {ext(st, hi0, dw)}",
             f"{el('dst.hi', dw)} := {mul(st, lo1, 'b', rb(K0), dw)} + {mul(st, hi0, 'b', rb(K1), dw)} + {ext(st, hi1, dw)}"]
    both("tmpy", f"Q6_W{dt}_vtmpy_{sfx}", f"Q6_W{dt}_vtmpyacc_W{dt}{sfx}", 1024 // dw, lines, "vxx")

# ---------------------------------------------------------------- reductions of four bytes (vrmpy)
for (dt, ta, tb, sfx, scalar) in (
    ("uw", "ub", "ub", "VubRub", True), ("w", "ub", "b", "VubRb", True),
    ("uw", "ub", "ub", "VubVub", False), ("w", "b", "b", "VbVb", False), ("w", "ub", "b", "VubVb", False),
):
    terms = [mul(ta, el("vu", 8, "i", 8 * k, 32), tb, rb(k) if scalar else el("vv", 8, "i", 8 * k, 32), 32) for k in range(4)]
    both("rmpy", f"Q6_V{dt}_vrmpy_{sfx}", f"Q6_V{dt}_vrmpyacc_V{dt}{sfx}", 32, [f"{el('dst', 32)} := " + " + ".join(terms)], "vx")


def sliding(u1, term):
    """The pair forms with #u1: the manual's vrmpyubi/vrmpybusi/vrsadubi
    with uiV = u1, byte k of the word pair against rt byte (k - u1) & 3."""
    first = "hi" if u1 else "lo"
    lo = [term(f"vuu.{first if k == 0 else 'lo'}", k, (k - u1) & 3) for k in range(4)]
    hi = [term(f"vuu.{'hi' if k < 2 else (first if k == 2 else 'lo')}", k, ((k + 2) - u1) & 3) for k in range(4)]
    return [f"{el('dst.lo', 32)} := " + " + ".join(lo), f"{el('dst.hi', 32)} := " + " + ".join(hi)]


def absd(op, k, r):
    return f"AbsDiff32(ZeroExtend32({el(op, 8, 'i', 8 * k, 32)}), ZeroExtend32({rb(r)}))"


for (dt, nm, term) in (
    ("uw", "vrmpy_WubRubI", lambda op, k, r: mul("ub", el(op, 8, "i", 8 * k, 32), "ub", rb(r), 32)),
    ("w", "vrmpy_WubRbI", lambda op, k, r: mul("ub", el(op, 8, "i", 8 * k, 32), "b", rb(r), 32)),
    ("uw", "vrsad_WubRubI", absd),
):
    for accum in (False, True):
        branch = [sliding(u1, term) for u1 in (0, 1)]
        if accum:
            branch = [acc_of(b, "vxx") for b in branch]
        body = ["IF iu1 == 1 THEN"] + ["    " + l for l in branch[1]] + ["ELSE"] + ["    " + l for l in branch[0]] + ["FI"]
        base, sfx = nm.split("_", 1)
        name = f"Q6_W{dt}_{base}acc_W{dt}{sfx}" if accum else f"Q6_W{dt}_{nm}"
        add("rmpy", name, loop(32, body))
# vdsad: sums of absolute differences of halfwords against rt's halves, sliding
L0, L1, HH0 = el("vuu.lo", 16, "i", 0, 32), el("vuu.lo", 16, "i", 16, 32), el("vuu.hi", 16, "i", 0, 32)
R0, R1 = f"ZeroExtend32({rb(0, 16)})", f"ZeroExtend32({rb(1, 16)})"
both("rmpy", "Q6_Wuw_vdsad_WuhRuh", "Q6_Wuw_vdsadacc_WuwWuhRuh", 32, [
    f"{el('dst.lo', 32)} := AbsDiff32(ZeroExtend32({L0}), {R0}) + AbsDiff32(ZeroExtend32({L1}), {R1})",
    f"{el('dst.hi', 32)} := AbsDiff32(ZeroExtend32({L1}), {R0}) + AbsDiff32(ZeroExtend32({HH0}), {R1})"], "vxx")

MPY_DEFS = """
def AbsDiff32(a: bv32, b: bv32) -> bv32
RETURN a >u b ? a - b : b - a
"""
