# Instruction shapes, by family; exec'd by gen_neon.py (shares its helpers).

def mn(signed, unsigned=None):
    return lambda s: signed if unsigned is None else (signed if s == "s" else unsigned)


def sh(s):
    return ">>s" if s == "s" else ">>u"


# ---- add: wrapping, saturating, halving, long, wide, narrowing-high ----
binary("add", "vadd", mn("add"), "basic", ALL, lambda a, b, s, e: f"{a} + {b}")
binary("add", "vsub", mn("sub"), "basic", ALL, lambda a, b, s, e: f"{a} - {b}")
binary("add", "vqadd", mn("sqadd", "uqadd"), "complex", ALL,
       lambda a, b, s, e: sat(s, e, f"{ext(s, e + 1, a)} + {ext(s, e + 1, b)}"))
binary("add", "vqsub", mn("sqsub", "uqsub"), "complex", ALL,
       lambda a, b, s, e: (f"SaturateS{e}({ext(s, e + 1, a)} - {ext(s, e + 1, b)})" if s == "s"
                           else f"SaturateSU{e}({ext(s, e + 1, a)} - {ext(s, e + 1, b)})"))
binary("add", "vhadd", mn("shadd", "uhadd"), "complex", NO64,
       lambda a, b, s, e: f"Truncate{e}(({ext(s, e + 1, a)} + {ext(s, e + 1, b)}) >>s 1)" if s == "s"
       else f"Truncate{e}(({ext(s, e + 1, a)} + {ext(s, e + 1, b)}) >>u 1)")
binary("add", "vrhadd", mn("srhadd", "urhadd"), "complex", NO64,
       lambda a, b, s, e: f"Truncate{e}(({ext(s, e + 1, a)} + {ext(s, e + 1, b)} + 1) {sh(s)} 1)")
# Halving subtract: the E+1-bit difference can be negative for unsigned inputs too.
binary("add", "vhsub", mn("shsub", "uhsub"), "complex", NO64,
       lambda a, b, s, e: f"Truncate{e}(({ext(s, e + 1, a)} - {ext(s, e + 1, b)}) >>s 1)")

for op, sym in (("add", "+"), ("sub", "-")):
    for s, e in NO64:
        for high in (False, True):
            base = 64 if high else 0
            w = 128 if high else 64
            nm = f"v{op}l{'_high' if high else ''}_{s}{e}"
            emit("add", nm, [("a", f"bv{w}"), ("b", f"bv{w}")], 128, f"{s}{op}l{'2' if high else ''}", "long",
                 loop(64 // e, [f"{out(2 * e)} := {ext(s, 2 * e, el('a', e, base))} {sym} {ext(s, 2 * e, el('b', e, base))}"]))
            nm = f"v{op}w{'_high' if high else ''}_{s}{e}"
            emit("add", nm, [("a", "bv128"), ("b", f"bv{w}")], 128, f"{s}{op}w{'2' if high else ''}", "long",
                 loop(64 // e, [f"{out(2 * e)} := {el('a', 2 * e)} {sym} {ext(s, 2 * e, el('b', e, base))}"]))
    for rnd in (False, True):
        for s, e in NARROWABLE:
            h = e // 2
            expr = f"{el('a', e)} {sym} {el('b', e)}" + (f" + {1 << (h - 1)}" if rnd else "")
            line = f"{out(h)} := Truncate{h}(({expr}) >>u {h})"
            r = "r" if rnd else ""
            emit("add", f"v{r}{op}hn_{s}{e}", [("a", "bv128"), ("b", "bv128")], 64, f"{r}{op}hn", "narrow", loop(64 // h, [line]))
            hi_line = f"dst[64+j*{h}+{h - 1}:64+j*{h}] := Truncate{h}(({expr}) >>u {h})"
            emit("add", f"v{r}{op}hn_high_{s}{e}", [("r", "bv64"), ("a", "bv128"), ("b", "bv128")], 128, f"{r}{op}hn2", "narrow",
                 "dst[63:0] := r\n" + loop(64 // h, [hi_line]))


# ---- abs and neg ----
SIGNED = [(s, e) for s, e in ALL if s == "s"]
unary("abs", "vabs", mn("abs"), "basic", SIGNED, lambda a, s, e: f"{a} <s 0 ? 0 - {a} : {a}")
unary("abs", "vneg", mn("neg"), "basic", SIGNED, lambda a, s, e: f"0 - {a}")
unary("abs", "vqabs", mn("sqabs"), "complex", SIGNED, lambda a, s, e: f"SaturateS{e}({a} <s 0 ? 0 - {ext(s, e + 1, a)} : {ext(s, e + 1, a)})")
unary("abs", "vqneg", mn("sqneg"), "complex", SIGNED, lambda a, s, e: f"SaturateS{e}(0 - {ext(s, e + 1, a)})")


# ---- abd: absolute difference, long, accumulating ----
def absd(a, b, s):
    return f"({a} >{s} {b} ? {a} - {b} : {b} - {a})"


binary("abd", "vabd", mn("sabd", "uabd"), "abd", NO64, lambda a, b, s, e: absd(a, b, s))
for s, e in NO64:
    for q in (False, True):
        w = 128 if q else 64
        emit("abd", cname("vaba", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}"), ("c", f"bv{w}")], w, f"{s}aba", "aba",
             loop(w // e, [f"{out(e)} := {el('a', e)} + {absd(el('b', e), el('c', e), s)}"]))
    for high in (False, True):
        base, w, h2 = (64, 128, "_high") if high else (0, 64, "")
        d = absd(el("a", e, base), el("b", e, base), s)
        emit("abd", f"vabdl{h2}_{s}{e}", [("a", f"bv{w}"), ("b", f"bv{w}")], 128, f"{s}abdl{'2' if high else ''}", "abd",
             loop(64 // e, [f"{out(2 * e)} := ZeroExtend{2 * e}{d}"]))
        d = absd(el("b", e, base), el("c", e, base), s)
        emit("abd", f"vabal{h2}_{s}{e}", [("a", "bv128"), ("b", f"bv{w}"), ("c", f"bv{w}")], 128, f"{s}abal{'2' if high else ''}", "aba",
             loop(64 // e, [f"{out(2 * e)} := {el('a', 2 * e)} + ZeroExtend{2 * e}{d}"]))


# ---- minmax: min, max, pairwise min/max/add, pairwise long add ----
binary("minmax", "vmax", mn("smax", "umax"), "minmax", NO64, lambda a, b, s, e: f"{a} >{s} {b} ? {a} : {b}")
binary("minmax", "vmin", mn("smin", "umin"), "minmax", NO64, lambda a, b, s, e: f"{a} <{s} {b} ? {a} : {b}")


def pairwise(base, mnem, types, op, qs=(False, True)):
    for s, e in types:
        for q in qs:
            w = 128 if q else 64
            n = w // e
            x0, x1 = el("a", e, 0, "(2*j)"), el("a", e, 0, "(2*j+1)")
            y0, y1 = el("b", e, 0, "(2*j)"), el("b", e, 0, "(2*j+1)")
            body = loop(n // 2, [f"{out(e)} := {op(x0, x1, s)}", f"dst[{w // 2}+j*{e}+{e - 1}:{w // 2}+j*{e}] := {op(y0, y1, s)}"])
            emit("minmax", cname(base, s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], w, mnem(s), "minmax", body)


pairwise("vpmax", mn("smaxp", "umaxp"), NO64, lambda x, y, s: f"{x} >{s} {y} ? {x} : {y}")
pairwise("vpmin", mn("sminp", "uminp"), NO64, lambda x, y, s: f"{x} <{s} {y} ? {x} : {y}")
pairwise("vpadd", mn("addp"), NO64, lambda x, y, s: f"{x} + {y}", qs=(False,))
pairwise("vpadd", mn("addp"), ALL, lambda x, y, s: f"{x} + {y}", qs=(True,))
for s, e in NO64:
    for q in (False, True):
        w = 128 if q else 64
        x0, x1 = el("a", e, 0, "(2*j)"), el("a", e, 0, "(2*j+1)")
        emit("minmax", cname("vpaddl", s, e, q), [("a", f"bv{w}")], w, f"{s}addlp", "minmax",
             loop(w // (2 * e), [f"{out(2 * e)} := {ext(s, 2 * e, x0)} + {ext(s, 2 * e, x1)}"]))
        x0, x1 = el("b", e, 0, "(2*j)"), el("b", e, 0, "(2*j+1)")
        emit("minmax", cname("vpadal", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], w, f"{s}adalp", "aba",
             loop(w // (2 * e), [f"{out(2 * e)} := {el('a', 2 * e)} + {ext(s, 2 * e, x0)} + {ext(s, 2 * e, x1)}"]))


# ---- reduce: across-vector sum, long sum, max, min ----
def reduce(base, mnem, types, qs, combine, rbits, cost):
    for s, e in types:
        for q in qs:
            w = 128 if q else 64
            n = w // e
            lines = [f"acc := {combine(None, el('a', e, 0, '0'), s, e)}"]
            lines += [f"acc := {combine('acc', el('a', e, 0, str(k)), s, e)}" for k in range(1, n)]
            emit("reduce", cname(base, s, e, q, "v") if False else f"{base}{'q' if q else ''}_{s}{e}", [("a", f"bv{w}")],
                 rbits(e), mnem(s), cost, "\n".join(lines) + "\ndst := acc\n")


def add_into(acc, x, s, e):
    return x if acc is None else f"{acc} + {x}"


def addl_into(acc, x, s, e):
    return ext(s, 2 * e, x) if acc is None else f"{acc} + {ext(s, 2 * e, x)}"


def mx(op):
    return lambda acc, x, s, e: x if acc is None else f"({x} {op}{s} {acc} ? {x} : {acc})"


reduce("vaddv", mn("addv"), NO64, (False, True), add_into, lambda e: e, "reduce")
reduce("vaddv", mn("addp"), [(s, 64) for s in "su"], (True,), add_into, lambda e: e, "reduce")
reduce("vaddlv", mn("saddlv", "uaddlv"), NO64, (False, True), addl_into, lambda e: 2 * e, "reduce")
reduce("vmaxv", mn("smaxv", "umaxv"), NO64, (False, True), mx(">"), lambda e: e, "minmaxv")
reduce("vminv", mn("sminv", "uminv"), NO64, (False, True), mx("<"), lambda e: e, "minmaxv")


# ---- mul: multiply, accumulate, long, doubling saturating high halves ----
MUL = NO64
H32 = [(s, e) for s, e in ALL if e in (16, 32)]


def qdmulh(x, y, e, rnd):
    """sqdmulh/sqrdmulh: the high half of 2*x*y (+ rounding), saturated."""
    w = 2 * e + 2
    p = f"{ext('s', w, x)} * {ext('s', w, y)}"
    return f"SaturateS{e}(({p} + {p}{' + ' + str(1 << (e - 1)) if rnd else ''}) >>s {e})"


def qdmull(x, y, e):
    p = f"{ext('s', 2 * e + 1, x)} * {ext('s', 2 * e + 1, y)}"
    return f"SaturateS{2 * e}({p} + {p})"


def qrdmlah(acc, x, y, e, sub):
    w = 2 * e + 3
    p = f"{ext('s', w, x)} * {ext('s', w, y)}"
    op = "-" if sub else "+"
    return f"SaturateS{e}((({ext('s', w, acc)} * {1 << e}) {op} {p} {op} {p} + {1 << (e - 1)}) >>s {e})"


SHAPES = {
    # name: (mnemonic(s), cost, types, accumulate?, expr(acc, x, y, s, e))
    "vmul": (mn("mul"), "mul", MUL, False, lambda c, x, y, s, e: f"{x} * {y}"),
    "vmla": (mn("mla"), "mla", MUL, True, lambda c, x, y, s, e: f"{c} + {x} * {y}"),
    "vmls": (mn("mls"), "mla", MUL, True, lambda c, x, y, s, e: f"{c} - {x} * {y}"),
    "vqdmulh": (mn("sqdmulh"), "qdmul", [t for t in H32 if t[0] == "s"], False, lambda c, x, y, s, e: qdmulh(x, y, e, False)),
    "vqrdmulh": (mn("sqrdmulh"), "qdmul", [t for t in H32 if t[0] == "s"], False, lambda c, x, y, s, e: qdmulh(x, y, e, True)),
    "vqrdmlah": (mn("sqrdmlah"), "qdmul", [t for t in H32 if t[0] == "s"], True, lambda c, x, y, s, e: qrdmlah(c, x, y, e, False)),
    "vqrdmlsh": (mn("sqrdmlsh"), "qdmul", [t for t in H32 if t[0] == "s"], True, lambda c, x, y, s, e: qrdmlah(c, x, y, e, True)),
}
RDM = ("vqrdmlah", "vqrdmlsh")

for base, (mnem, cost, types, acc, f) in SHAPES.items():
    feat = "rdm" if base in RDM else "neon"
    for s, e in types:
        for q in (False, True):
            w = 128 if q else 64
            n = w // e
            pre = [("a", f"bv{w}")] if acc else []
            x, c = ("b", "a") if acc else ("a", None)
            y = "c" if acc else "b"
            cel = el(c, e) if acc else None
            # Vector by vector.
            emit("mul", cname(base, s, e, q), pre + [(x, f"bv{w}"), (y, f"bv{w}")], w, mnem(s), cost,
                 loop(n, [f"{out(e)} := {f(cel, el(x, e), el(y, e), s, e)}"]), feat)
            if e == 8:
                continue
            # By scalar (`_n`), for the ops ACLE gives one.
            if base not in RDM:
                emit("mul", cname(base, s, e, q, "_n"), pre + [(x, f"bv{w}"), (y, f"bv{e}")], w, mnem(s), cost,
                     loop(n, [f"{out(e)} := {f(cel, el(x, e), y, s, e)}"]), feat)
            # By lane of a 64-bit (`_lane`) or 128-bit (`_laneq`) vector.
            for vw, sfx in ((64, "_lane"), (128, "_laneq")):
                lanes = vw // e
                body = f"sel := {y} >>u (ZeroExtend16(lane) * {e})\nv := sel[{e - 1}:0]\n"
                body += loop(n, [f"{out(e)} := {f(cel, el(x, e), 'v', s, e)}"])
                emit("mul", cname(base, s, e, q, sfx), pre + [(x, f"bv{w}"), (y, f"bv{vw}"), ("lane", f"imm{(lanes - 1).bit_length()} in 0 to {lanes - 1}")],
                     w, mnem(s), cost, body, feat)

# Long: vmull, vmlal, vmlsl, vqdmull, vqdmlal, vqdmlsl (and _high, _n, _lane).
LONG = {
    "vmull": (lambda s: f"{s}mull", "mull", MUL, None),
    "vmlal": (lambda s: f"{s}mlal", "mla", MUL, "+"),
    "vmlsl": (lambda s: f"{s}mlsl", "mla", MUL, "-"),
    "vqdmull": (lambda s: "sqdmull", "qdmul", [t for t in H32 if t[0] == "s"], None),
    "vqdmlal": (lambda s: "sqdmlal", "qdmul", [t for t in H32 if t[0] == "s"], "+"),
    "vqdmlsl": (lambda s: "sqdmlsl", "qdmul", [t for t in H32 if t[0] == "s"], "-"),
}


def long_expr(base, acc_op, c, x, y, s, e):
    if base.startswith("vqd"):
        prod = qdmull(x, y, e)
        if acc_op is None:
            return prod
        return f"SaturateS{2 * e}({ext('s', 2 * e + 1, c)} {acc_op} {ext('s', 2 * e + 1, prod)})"
    prod = f"{ext(s, 2 * e, x)} * {ext(s, 2 * e, y)}"
    return prod if acc_op is None else f"{c} {acc_op} {prod}"


for base, (mnem, cost, types, acc_op) in LONG.items():
    for s, e in types:
        for high in (False, True):
            hb, w, hs, m2 = (64, 128, "_high", "2") if high else (0, 64, "", "")
            pre = [("a", "bv128")] if acc_op else []
            x, y = ("b", "c") if acc_op else ("a", "b")
            c = el("a", 2 * e) if acc_op else None
            emit("mul", f"{base}{hs}_{s}{e}", pre + [(x, f"bv{w}"), (y, f"bv{w}")], 128, mnem(s) + m2, cost,
                 loop(64 // e, [f"{out(2 * e)} := {long_expr(base, acc_op, c, el(x, e, hb), el(y, e, hb), s, e)}"]))
            if e == 8:
                continue
            emit("mul", f"{base}{hs}_n_{s}{e}", pre + [(x, f"bv{w}"), (y, f"bv{e}")], 128, mnem(s) + m2, cost,
                 loop(64 // e, [f"{out(2 * e)} := {long_expr(base, acc_op, c, el(x, e, hb), y, s, e)}"]))
            for vw, sfx in ((64, "_lane"), (128, "_laneq")):
                lanes = vw // e
                body = f"sel := {y} >>u (ZeroExtend16(lane) * {e})\nv := sel[{e - 1}:0]\n"
                body += loop(64 // e, [f"{out(2 * e)} := {long_expr(base, acc_op, c, el(x, e, hb), 'v', s, e)}"])
                emit("mul", f"{base}{hs}{sfx}_{s}{e}", pre + [(x, f"bv{w}"), (y, f"bv{vw}"), ("lane", f"imm{(lanes - 1).bit_length()} in 0 to {lanes - 1}")],
                     128, mnem(s) + m2, cost, body)


# ---- shift: by immediate (plain, rounding, accumulating, narrowing,
# saturating, long, insert) and by a signed count in a register ----
def immw(hi):
    return max(1, hi.bit_length())


def rshr(x, s, e, n="n"):
    """Rounding shift right by n >= 1, exact: ((x >> (n-1)) + 1) >> 1 in E+1 bits."""
    return f"Truncate{e}((({ext(s, e + 1, x)} {sh(s)} ({n} - 1)) + 1) {sh(s)} 1)"


def rshr_wide(x, s, e, n="n"):
    """The same, kept E+1 bits wide (for a saturating narrow)."""
    return f"((({ext(s, e + 1, x)} {sh(s)} ({n} - 1)) + 1) {sh(s)} 1)"


def shift_imm(base, mnem, cost, types, lo_hi, expr, acc=False):
    for s, e in types:
        lo, hi = lo_hi(e)
        for q in (False, True):
            w = 128 if q else 64
            pre = [("a", f"bv{w}")] if acc else []
            x = "b" if acc else "a"
            emit("shift", cname(base, s, e, q, "_n"), pre + [(x, f"bv{w}"), ("n", f"imm{immw(hi)} in {lo} to {hi}")], w, mnem(s), cost,
                 loop(w // e, [f"{out(e)} := {expr(el('a', e) if acc else None, el(x, e), s, e)}"]))


shift_imm("vshr", mn("sshr", "ushr"), "shift", ALL, lambda e: (1, e), lambda c, x, s, e: f"{x} {sh(s)} n")
shift_imm("vshl", mn("shl"), "shift", ALL, lambda e: (0, e - 1), lambda c, x, s, e: f"{x} << n")
shift_imm("vrshr", mn("srshr", "urshr"), "shiftc", ALL, lambda e: (1, e), lambda c, x, s, e: rshr(x, s, e))
shift_imm("vsra", mn("ssra", "usra"), "shiftacc", ALL, lambda e: (1, e), lambda c, x, s, e: f"{c} + ({x} {sh(s)} n)", acc=True)
shift_imm("vrsra", mn("srsra", "ursra"), "shiftacc", ALL, lambda e: (1, e), lambda c, x, s, e: f"{c} + {rshr(x, s, e)}", acc=True)
shift_imm("vqshl", mn("sqshl", "uqshl"), "shiftc", ALL, lambda e: (0, e - 1), lambda c, x, s, e: sat(s, e, f"{ext(s, 2 * e, x)} << n"))
shift_imm("vqshlu", mn("sqshlu"), "shiftc", SIGNED, lambda e: (0, e - 1), lambda c, x, s, e: f"SaturateSU{e}({ext(s, 2 * e, x)} << n)")
# Insert: vsli keeps a's low n bits, vsri a's high n bits.
shift_imm("vsli", mn("sli"), "shiftacc", ALL, lambda e: (0, e - 1),
          lambda c, x, s, e: f"({x} << n) | (({c} << ({e} - ZeroExtend{e}(n))) >>u ({e} - ZeroExtend{e}(n)))", acc=True)
shift_imm("vsri", mn("sri"), "shiftacc", ALL, lambda e: (1, e),
          lambda c, x, s, e: f"({x} >>u n) | (({c} >>u ({e} - ZeroExtend{e}(n))) << ({e} - ZeroExtend{e}(n)))", acc=True)

# Narrowing shifts: 2E-bit elements of a to E bits, n in 1..E; _high puts them above r.
NARROW_SHIFTS = {
    "vshrn": (mn("shrn"), "shift", NARROWABLE, lambda x, s, h: f"Truncate{h}({x} >>u n)"),
    "vrshrn": (mn("rshrn"), "shiftc", NARROWABLE, lambda x, s, h: f"Truncate{h}({rshr_wide(x, 'u', 2 * h)})"),
    "vqshrn": (mn("sqshrn", "uqshrn"), "shiftc", NARROWABLE, lambda x, s, h: sat(s, h, f"{x} {sh(s)} n")),
    "vqrshrn": (mn("sqrshrn", "uqrshrn"), "shiftc", NARROWABLE, lambda x, s, h: sat(s, h, rshr_wide(x, s, 2 * h))),
    "vqshrun": (mn("sqshrun"), "shiftc", [t for t in NARROWABLE if t[0] == "s"], lambda x, s, h: f"SaturateSU{h}({x} >>s n)"),
    "vqrshrun": (mn("sqrshrun"), "shiftc", [t for t in NARROWABLE if t[0] == "s"], lambda x, s, h: f"SaturateSU{h}({rshr_wide(x, 's', 2 * h)})"),
}
for base, (mnem, cost, types, f) in NARROW_SHIFTS.items():
    for s, e in types:
        h = e // 2
        imm = ("n", f"imm{immw(h)} in 1 to {h}")
        emit("shift", f"{base}_n_{s}{e}", [("a", "bv128"), imm], 64, mnem(s), cost, loop(64 // h, [f"{out(h)} := {f(el('a', e), s, h)}"]))
        emit("shift", f"{base}_high_n_{s}{e}", [("r", "bv64"), ("a", "bv128"), imm], 128, mnem(s) + "2", cost,
             "dst[63:0] := r\n" + loop(64 // h, [f"dst[64+j*{h}+{h - 1}:64+j*{h}] := {f(el('a', e), s, h)}"]))

# Long shift: E to 2E bits, then left by n in 0..E.
for s, e in NO64:
    for high in (False, True):
        hb, w, hs = (64, 128, "_high") if high else (0, 64, "")
        emit("shift", f"vshll{hs}_n_{s}{e}", [("a", f"bv{w}"), ("n", f"imm{immw(e)} in 0 to {e}")], 128, f"{s}shll{'2' if high else ''}", "shift",
             loop(64 // e, [f"{out(2 * e)} := {ext(s, 2 * e, el('a', e, hb))} << n"]))


# By register: the count is the signed low byte of b's element; negative shifts right.
def shl_reg(x, c, s, e):
    return f"{c} <s 0 ? {x} {sh(s)} (0 - {c}) : {x} << {c}"


for s, e in ALL:
    for q in (False, True):
        w = 128 if q else 64
        c = f"b[j*{e}+7:j*{e}]"
        emit("shift", cname("vshl", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], w, f"{s}shl", "shift",
             loop(w // e, [f"{out(e)} := {shl_reg(el('a', e), c, s, e)}"]))


# ---- movn: narrow (plain, saturating) and widen ----
for s, e in NARROWABLE:
    h = e // 2
    for base, mnem, f in (("vmovn", "xtn", lambda x: f"Truncate{h}({x})"),
                          ("vqmovn", f"{s}qxtn", lambda x: sat(s, h, x)),
                          ("vqmovun", "sqxtun", lambda x: f"SaturateSU{h}({x})")):
        if base == "vqmovun" and s == "u":
            continue
        emit("movn", f"{base}_{s}{e}", [("a", "bv128")], 64, mnem, "qmovn" if "q" in base else "movn", loop(64 // h, [f"{out(h)} := {f(el('a', e))}"]))
        emit("movn", f"{base}_high_{s}{e}", [("r", "bv64"), ("a", "bv128")], 128, mnem + "2", "qmovn" if "q" in base else "movn",
             "dst[63:0] := r\n" + loop(64 // h, [f"dst[64+j*{h}+{h - 1}:64+j*{h}] := {f(el('a', e))}"]))
for s, e in NO64:
    emit("movn", f"vmovl_{s}{e}", [("a", "bv64")], 128, f"{s}xtl", "shift", loop(64 // e, [f"{out(2 * e)} := {ext(s, 2 * e, el('a', e))}"]))
    emit("movn", f"vmovl_high_{s}{e}", [("a", "bv128")], 128, f"{s}xtl2", "shift", loop(64 // e, [f"{out(2 * e)} := {ext(s, 2 * e, el('a', e, 64))}"]))


# ---- dot: 4-way 8-bit dot products into 32-bit lanes (dotprod, i8mm) ----
def dot_body(n, a_sign, b_sign, bsrc, lane):
    lines = []
    pre = ""
    if lane:
        pre = f"sel := b >>u (ZeroExtend16(lane) * 32)\ng := sel[31:0]\n"
    terms = []
    for k in range(4):
        x = f"a[j*32+{8 * k + 7}:j*32+{8 * k}]"
        y = f"g[{8 * k + 7}:{8 * k}]" if lane else f"b[j*32+{8 * k + 7}:j*32+{8 * k}]"
        terms.append(f"{ext(a_sign, 32, x)} * {ext(b_sign, 32, y)}")
    lines.append(f"dst[j*32+31:j*32] := r[j*32+31:j*32] + " + " + ".join(terms))
    return pre + loop(n, lines)


for (nm, asg, bsg, feat, mnem, plain) in (("vdot_s32", "s", "s", "dotprod", "sdot", True), ("vdot_u32", "u", "u", "dotprod", "udot", True),
                                         ("vusdot_s32", "u", "s", "i8mm", "usdot", True), ("vsudot_s32", "s", "u", "i8mm", "sudot", False)):
    for q in (False, True):
        w = 128 if q else 64
        stem, sfx = nm.split("_")
        qn = f"{stem}{'q' if q else ''}"
        if plain:
            emit("dot", f"{qn}_{sfx}", [("r", f"bv{w}"), ("a", f"bv{w}"), ("b", f"bv{w}")], w, mnem, "dot", dot_body(w // 32, asg, bsg, "b", False), feat)
        for vw, ls in ((64, "_lane"), (128, "_laneq")):
            lanes = vw // 32
            emit("dot", f"{qn}{ls}_{sfx}", [("r", f"bv{w}"), ("a", f"bv{w}"), ("b", f"bv{vw}"), ("lane", f"imm{immw(lanes - 1)} in 0 to {lanes - 1}")],
                 w, mnem, "dot", dot_body(w // 32, asg, bsg, "b", True), feat)


# ---- logic: bitwise ops and bit select ----
POLY = [("p", 8), ("p", 16), ("p", 64)]
binary("logic", "vand", mn("and"), "logic", ALL, lambda a, b, s, e: f"{a} & {b}")
binary("logic", "vorr", mn("orr"), "logic", ALL, lambda a, b, s, e: f"{a} | {b}")
binary("logic", "veor", mn("eor"), "logic", ALL, lambda a, b, s, e: f"{a} ^ {b}")
binary("logic", "vbic", mn("bic"), "logic", ALL, lambda a, b, s, e: f"{a} & ~{b}")
binary("logic", "vorn", mn("orn"), "logic", ALL, lambda a, b, s, e: f"{a} | ~{b}")
unary("logic", "vmvn", mn("mvn"), "logic", NO64 + [("p", 8)], lambda a, s, e: f"~{a}")
for s, e in ALL + POLY:
    for q in (False, True):
        w = 128 if q else 64
        emit("logic", cname("vbsl", s, e, q), [("m", f"bv{w}"), ("b", f"bv{w}"), ("c", f"bv{w}")], w, "bsl", "logic",
             loop(w // e, [f"{out(e)} := ({el('m', e)} & {el('b', e)}) | (~{el('m', e)} & {el('c', e)})"]))


# ---- cmp: all-ones where the comparison holds ----
def mask(e, cond):
    return f"0 - ZeroExtend{e}({cond})"


binary("cmp", "vceq", mn("cmeq"), "cmp", ALL + [("p", 8), ("p", 64)], lambda a, b, s, e: mask(e, f"{a} == {b}"))
binary("cmp", "vtst", mn("cmtst"), "cmp", ALL + [("p", 8), ("p", 64)], lambda a, b, s, e: mask(e, f"({a} & {b}) != 0"))
for op, ms, mu in (("ge", "cmge", "cmhs"), ("gt", "cmgt", "cmhi"), ("le", "cmge", "cmhs"), ("lt", "cmgt", "cmhi")):
    binary("cmp", f"vc{op}", mn(ms, mu), "cmp", ALL, lambda a, b, s, e, op=op: mask(e, f"{a} {cmpop(op, s)} {b}"))
unary("cmp", "vceqz", mn("cmeq"), "cmp", ALL + [("p", 8), ("p", 64)], lambda a, s, e: mask(e, f"{a} == 0"))
for op in ("ge", "gt", "le", "lt"):
    unary("cmp", f"vc{op}z", mn(f"cm{op}"), "cmp", SIGNED, lambda a, s, e, op=op: mask(e, f"{a} {cmpop(op, 's')} 0"))


# ---- bits: population count, leading zeros, leading sign bits ----
unary("bits", "vcnt", mn("cnt"), "basic", [("s", 8), ("u", 8), ("p", 8)], lambda a, s, e: " + ".join(f"ZeroExtend8({a}[j*8+{k}])".replace(f"{a}[j*8+{k}]", f"a[j*8+{k}]") for k in range(8)))
unary("bits", "vclz", mn("clz"), "basic", NO64,
      lambda a, s, e: " + ".join(f"ZeroExtend{e}(({a} >>u {e - t}) == 0)" for t in range(1, e + 1)))
unary("bits", "vcls", mn("cls"), "basic", NO64,
      lambda a, s, e: " + ".join(f"ZeroExtend{e}((({a} >>s {e - 1 - t}) == 0) OR (~({a} >>s {e - 1 - t}) == 0))" for t in range(1, e)))


# ---- permute: zip, unzip, transpose (one half, or both as a pair), ext, rev ----
def perm_src(kind, half, n, k):
    """(operand, element) feeding output element k of zip/uzp/trn 1 or 2."""
    if kind == "zip":
        return ("a" if k % 2 == 0 else "b", half * n // 2 + k // 2)
    if kind == "uzp":
        return ("a" if k < n // 2 else "b", 2 * (k % (n // 2)) + half)
    return ("a" if k % 2 == 0 else "b", (k & ~1) + half)


for kind in ("zip", "uzp", "trn"):
    for s, e in ALL + POLY:
        for q in (False, True):
            w = 128 if q else 64
            n = w // e
            if n < 2:
                continue
            halves = []
            for half in (0, 1):
                lines = []
                for k in range(n):
                    src, m = perm_src(kind, half, n, k)
                    lines.append(f"dst[{half * w + k * e + e - 1}:{half * w + k * e}] := {src}[{m * e + e - 1}:{m * e}]")
                halves.append(lines)
                alone = [f"dst[{k * e + e - 1}:{k * e}] := " + l.split(" := ")[1] for k, l in enumerate(lines)]
                emit("permute", cname(f"v{kind}{half + 1}", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], w, f"{kind}{half + 1}", "perm",
                     "\n".join(alone) + "\n")
            if e < 64:
                # vzip_s8 and friends return both halves (a two-register struct):
                # two instructions, named by the first.
                emit("permute", cname(f"v{kind}", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], 2 * w, f"{kind}1", "perm2",
                     "\n".join(halves[0] + halves[1]) + "\n")

for s, e in ALL + POLY:
    for q in (False, True):
        w = 128 if q else 64
        n = w // e
        body = f"tmp := Concat(b, a) >>u (ZeroExtend16(n) * {e})\n" + loop(n, [f"{out(e)} := tmp[j*{e}+{e - 1}:j*{e}]"])
        emit("permute", cname("vext", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}"), ("n", f"imm{immw(n - 1)} in 0 to {n - 1}")], w, "ext", "perm", body)

for g in (16, 32, 64):
    for s, e in NO64 + POLY:
        if e >= g:
            continue
        for q in (False, True):
            w = 128 if q else 64
            per = g // e
            lines = [f"dst[{k * e + e - 1}:{k * e}] := a[{(k ^ (per - 1)) * e + e - 1}:{(k ^ (per - 1)) * e}]" for k in range(w // e)]
            emit("permute", cname(f"vrev{g}", s, e, q), [("a", f"bv{w}")], w, f"rev{g}", "perm", "\n".join(lines) + "\n")


# ---- dup: broadcast, lanes in and out, halves ----
for s, e in ALL + POLY:
    for q in (False, True):
        w = 128 if q else 64
        n = w // e
        for base in ("vdup", "vmov"):
            emit("dup", cname(base, s, e, q, "_n"), [("a", f"bv{e}")], w, "dup", "dup", loop(n, [f"{out(e)} := a"]))
        for vw, sfx in ((64, "_lane"), (128, "_laneq")):
            lanes = vw // e
            body = f"sel := a >>u (ZeroExtend16(lane) * {e})\n" + loop(n, [f"{out(e)} := sel[{e - 1}:0]"])
            emit("dup", cname("vdup", s, e, q, sfx), [("a", f"bv{vw}"), ("lane", f"imm{immw(lanes - 1)} in 0 to {lanes - 1}")], w, "dup", "dup", body)
        emit("dup", cname("vget", s, e, q, "_lane"), [("a", f"bv{w}"), ("lane", f"imm{immw(n - 1)} in 0 to {n - 1}")], e, "umov", "ins",
             f"sel := a >>u (ZeroExtend16(lane) * {e})\ndst := sel[{e - 1}:0]\n")
        emit("dup", cname("vset", s, e, q, "_lane"), [("a", f"bv{e}"), ("v", f"bv{w}"), ("lane", f"imm{immw(n - 1)} in 0 to {n - 1}")], w, "ins", "ins",
             loop(n, [f"{out(e)} := lane == j ? a : {el('v', e)}"]))
    emit("dup", f"vget_low_{s}{e}", [("a", "bv128")], 64, "mov", "dup", loop(64 // e, [f"{out(e)} := {el('a', e)}"]))
    emit("dup", f"vget_high_{s}{e}", [("a", "bv128")], 64, "dup", "dup", loop(64 // e, [f"{out(e)} := {el('a', e, 64)}"]))
    emit("dup", f"vcombine_{s}{e}", [("lo", "bv64"), ("hi", "bv64")], 128, "mov", "dup",
         loop(64 // e, [f"{out(e)} := {el('lo', e)}", f"dst[64+j*{e}+{e - 1}:64+j*{e}] := {el('hi', e)}"]))


# ---- shift by register, saturating and rounding (count: signed low byte of b's element) ----
def qshl_reg(x, c, s, e):
    w = e + 128
    left = f"SaturateS{e}({ext('s', w, x)} << {c})" if s == "s" else f"SaturateU{e}(ZeroExtend{w}({x}) << {c})"
    return f"{c} <s 0 ? {x} {sh(s)} (0 - {c}) : {left}"


def rshl_reg(x, c, s, e, saturate):
    right = rshr(x, s, e, f"(0 - {c})")
    if saturate:
        w = e + 128
        left = f"SaturateS{e}({ext('s', w, x)} << {c})" if s == "s" else f"SaturateU{e}(ZeroExtend{w}({x}) << {c})"
    else:
        left = f"{x} << {c}"
    return f"{c} <s 0 ? {right} : {left}"


for base, mnem, f, cost in (("vqshl", mn("sqshl", "uqshl"), lambda x, c, s, e: qshl_reg(x, c, s, e), "shiftc"),
                            ("vrshl", mn("srshl", "urshl"), lambda x, c, s, e: rshl_reg(x, c, s, e, False), "shiftc"),
                            ("vqrshl", mn("sqrshl", "uqrshl"), lambda x, c, s, e: rshl_reg(x, c, s, e, True), "shiftc")):
    for s, e in ALL:
        for q in (False, True):
            w = 128 if q else 64
            c = f"b[j*{e}+7:j*{e}]"
            emit("shift", cname(base, s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], w, mnem(s), cost,
                 loop(w // e, [f"{out(e)} := {f(el('a', e), c, s, e)}"]))


# ---- add: saturating add of the other signedness (suqadd, usqadd) ----
for s, e in ALL:
    for q in (False, True):
        w = 128 if q else 64
        if s == "s":
            expr = f"SaturateS{e}({ext('s', e + 2, el('a', e))} + ZeroExtend{e + 2}({el('b', e)}))"
            emit("add", cname("vuqadd", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], w, "suqadd", "complex", loop(w // e, [f"{out(e)} := {expr}"]))
        else:
            expr = f"SaturateSU{e}(ZeroExtend{e + 2}({el('a', e)}) + {ext('s', e + 2, el('b', e))})"
            emit("add", cname("vsqadd", s, e, q), [("a", f"bv{w}"), ("b", f"bv{w}")], w, "usqadd", "complex", loop(w // e, [f"{out(e)} := {expr}"]))


# ---- mul: polynomial (carry-less) multiply, 8-bit ----
def clmul(x, y, bits, width):
    return " ^ ".join(f"((ZeroExtend{width}({x}) << {k}) & (0 - ZeroExtend{width}({y.format(k)})))" for k in range(bits))


for q in (False, True):
    w = 128 if q else 64
    emit("mul", f"vmul{'q' if q else ''}_p8", [("a", f"bv{w}"), ("b", f"bv{w}")], w, "pmul", "mul",
         loop(w // 8, [f"{out(8)} := Truncate8({clmul(el('a', 8), 'b[j*8+{}]', 8, 16)})"]))
for high in (False, True):
    hb, w, hs = (64, 128, "_high") if high else (0, 64, "")
    emit("mul", f"vmull{hs}_p8", [("a", f"bv{w}"), ("b", f"bv{w}")], 128, f"pmull{'2' if high else ''}", "mull",
         loop(8, [f"{out(16)} := {clmul(el('a', 8, hb), 'b[' + str(hb) + '+j*8+{}]', 8, 16)}"]))


# ---- table: byte lookups in 1 to 4 registers; out-of-range indexes give 0 (tbl) or keep a (tbx) ----
for regs in (1, 2, 3, 4):
    for s in "sup":
        for kind in ("tbl", "tbx"):
            for qt in (False, True):
                # vtbl/vtbx: tables of 64-bit registers, 64-bit result; vqtbl/vqtbx: 128-bit registers, either result.
                tw = (128 if qt else 64) * regs
                nbytes = tw // 8
                for qr in ((False, True) if qt else (False,)):
                    w = 128 if qr else 64
                    nm = f"v{'q' if qt else ''}{kind}{regs}{'q' if qr else ''}_{s}8"
                    tb = f"sel := t >>u (ZeroExtend16({el('idx', 8)}) * 8)"
                    hit = f"{el('idx', 8)} <u {nbytes}"
                    val = f"sel[7:0] & (0 - ZeroExtend8({hit}))" if kind == "tbl" else f"{hit} ? sel[7:0] : {el('a', 8)}"
                    pre = [("a", f"bv{w}")] if kind == "tbx" else []
                    emit("table", nm, pre + [("t", f"bv{tw}"), ("idx", f"bv{w}")], w, kind, "perm", loop(w // 8, [tb, f"{out(8)} := {val}"]))


# ---- scalar: AArch64's one-element forms (vqaddb_s8, vshrd_n_s64, vqmovnh_s16, ...) ----
L = {8: "b", 16: "h", 32: "s", 64: "d"}


def scalar(base, mnem, cost, types, nargs, expr, ret=lambda e: e, imm=None, feat="neon", sfx=""):
    for s, e in types:
        ps = [(n, f"bv{e}") for n in "abc"[:nargs]]
        if imm:
            lo, hi = imm(e)
            ps.append(("n", f"imm{immw(hi)} in {lo} to {hi}"))
        emit("scalar", f"{base}{L[e]}{sfx}_{s}{e}", ps, ret(e), mnem(s), cost, f"dst := {expr(s, e)}\n", feat)


S64 = [("s", 64), ("u", 64)]
SQ = [t for t in H32 if t[0] == "s"]
scalar("vqadd", mn("sqadd", "uqadd"), "complex", ALL, 2, lambda s, e: sat(s, e, f"{ext(s, e + 1, 'a')} + {ext(s, e + 1, 'b')}"))
scalar("vqsub", mn("sqsub", "uqsub"), "complex", ALL, 2,
       lambda s, e: (f"SaturateS{e}" if s == "s" else f"SaturateSU{e}") + f"({ext(s, e + 1, 'a')} - {ext(s, e + 1, 'b')})")
scalar("vadd", mn("add"), "basic", S64, 2, lambda s, e: "a + b")
scalar("vsub", mn("sub"), "basic", S64, 2, lambda s, e: "a - b")
scalar("vqabs", mn("sqabs"), "complex", SIGNED, 1, lambda s, e: f"SaturateS{e}(a <s 0 ? 0 - {ext(s, e + 1, 'a')} : {ext(s, e + 1, 'a')})")
scalar("vqneg", mn("sqneg"), "complex", SIGNED, 1, lambda s, e: f"SaturateS{e}(0 - {ext(s, e + 1, 'a')})")
scalar("vabs", mn("abs"), "basic", [("s", 64)], 1, lambda s, e: "a <s 0 ? 0 - a : a")
scalar("vneg", mn("neg"), "basic", [("s", 64)], 1, lambda s, e: "0 - a")
scalar("vqdmulh", mn("sqdmulh"), "qdmul", SQ, 2, lambda s, e: qdmulh("a", "b", e, False))
scalar("vqrdmulh", mn("sqrdmulh"), "qdmul", SQ, 2, lambda s, e: qdmulh("a", "b", e, True))
scalar("vqdmull", mn("sqdmull"), "qdmul", SQ, 2, lambda s, e: qdmull("a", "b", e), ret=lambda e: 2 * e)
scalar("vqrdmlah", mn("sqrdmlah"), "qdmul", SQ, 3, lambda s, e: qrdmlah("a", "b", "c", e, False), feat="rdm")
scalar("vqrdmlsh", mn("sqrdmlsh"), "qdmul", SQ, 3, lambda s, e: qrdmlah("a", "b", "c", e, True), feat="rdm")
scalar("vuqadd", mn("suqadd"), "complex", SIGNED, 2, lambda s, e: f"SaturateS{e}({ext('s', e + 2, 'a')} + ZeroExtend{e + 2}(b))")
scalar("vsqadd", mn("usqadd"), "complex", [t for t in ALL if t[0] == "u"], 2, lambda s, e: f"SaturateSU{e}(ZeroExtend{e + 2}(a) + {ext('s', e + 2, 'b')})")
# Narrowing: the suffix names the wide type (vqmovnh_s16 gives an int8_t).
scalar("vqmovn", mn("sqxtn", "uqxtn"), "qmovn", NARROWABLE, 1, lambda s, e: sat(s, e // 2, "a"), ret=lambda e: e // 2)
scalar("vqmovun", mn("sqxtun"), "qmovn", [t for t in NARROWABLE if t[0] == "s"], 1, lambda s, e: f"SaturateSU{e // 2}(a)", ret=lambda e: e // 2)
# Shifts by immediate.
scalar("vshr", mn("sshr", "ushr"), "shift", S64, 1, lambda s, e: f"a {sh(s)} n", imm=lambda e: (1, e), sfx="_n")
scalar("vshl", mn("shl"), "shift", S64, 1, lambda s, e: "a << n", imm=lambda e: (0, e - 1), sfx="_n")
scalar("vrshr", mn("srshr", "urshr"), "shiftc", S64, 1, lambda s, e: rshr("a", s, e), imm=lambda e: (1, e), sfx="_n")
scalar("vsra", mn("ssra", "usra"), "shiftacc", S64, 2, lambda s, e: f"a + (b {sh(s)} n)", imm=lambda e: (1, e), sfx="_n")
scalar("vrsra", mn("srsra", "ursra"), "shiftacc", S64, 2, lambda s, e: f"a + {rshr('b', s, e)}", imm=lambda e: (1, e), sfx="_n")
scalar("vqshl", mn("sqshl", "uqshl"), "shiftc", ALL, 1, lambda s, e: sat(s, e, f"{ext(s, 2 * e, 'a')} << n"), imm=lambda e: (0, e - 1), sfx="_n")
scalar("vqshlu", mn("sqshlu"), "shiftc", SIGNED, 1, lambda s, e: f"SaturateSU{e}({ext(s, 2 * e, 'a')} << n)", imm=lambda e: (0, e - 1), sfx="_n")
scalar("vsli", mn("sli"), "shiftacc", S64, 2, lambda s, e: f"(b << n) | ((a << ({e} - ZeroExtend{e}(n))) >>u ({e} - ZeroExtend{e}(n)))", imm=lambda e: (0, e - 1), sfx="_n")
scalar("vsri", mn("sri"), "shiftacc", S64, 2, lambda s, e: f"(b >>u n) | ((a >>u ({e} - ZeroExtend{e}(n))) << ({e} - ZeroExtend{e}(n)))", imm=lambda e: (1, e), sfx="_n")
for base, mnem, f, types in (("vqshrn", mn("sqshrn", "uqshrn"), lambda s, e: sat(s, e // 2, f"a {sh(s)} n"), NARROWABLE),
                             ("vqrshrn", mn("sqrshrn", "uqrshrn"), lambda s, e: sat(s, e // 2, rshr_wide("a", s, e)), NARROWABLE),
                             ("vqshrun", mn("sqshrun"), lambda s, e: f"SaturateSU{e // 2}(a >>s n)", [t for t in NARROWABLE if t[0] == "s"]),
                             ("vqrshrun", mn("sqrshrun"), lambda s, e: f"SaturateSU{e // 2}({rshr_wide('a', 's', e)})", [t for t in NARROWABLE if t[0] == "s"])):
    scalar(base, mnem, "shiftc", types, 1, f, ret=lambda e: e // 2, imm=lambda e: (1, e // 2), sfx="_n")
# Shifts by register (the count is the signed low byte of b).
scalar("vshl", mn("sshl", "ushl"), "shift", S64, 2, lambda s, e: shl_reg("a", "b[7:0]", s, e))
scalar("vrshl", mn("srshl", "urshl"), "shiftc", S64, 2, lambda s, e: rshl_reg("a", "b[7:0]", s, e, False))
scalar("vqshl", mn("sqshl", "uqshl"), "shiftc", ALL, 2, lambda s, e: qshl_reg("a", "b[7:0]", s, e))
scalar("vqrshl", mn("sqrshl", "uqrshl"), "shiftc", ALL, 2, lambda s, e: rshl_reg("a", "b[7:0]", s, e, True))
# Compares and tests (64-bit).
scalar("vceq", mn("cmeq"), "cmp", S64, 2, lambda s, e: mask(e, "a == b"))
scalar("vtst", mn("cmtst"), "cmp", S64, 2, lambda s, e: mask(e, "(a & b) != 0"))
for op, ms, mu in (("ge", "cmge", "cmhs"), ("gt", "cmgt", "cmhi"), ("le", "cmge", "cmhs"), ("lt", "cmgt", "cmhi")):
    scalar(f"vc{op}", mn(ms, mu), "cmp", S64, 2, lambda s, e, op=op: mask(e, f"a {cmpop(op, s)} b"))
    scalar(f"vc{op}z", mn(f"cm{op}"), "cmp", [("s", 64)], 1, lambda s, e, op=op: mask(e, f"a {cmpop(op, 's')} 0"))
scalar("vceqz", mn("cmeq"), "cmp", S64, 1, lambda s, e: mask(e, "a == 0"))
# Pairwise add of a 2-lane vector to a scalar.
for s in "su":
    emit("scalar", f"vpaddd_{s}64", [("a", "bv128")], 64, "addp", "reduce", "dst := a[63:0] + a[127:64]\n")


# ---- dup: copy one lane into another (two immediates) ----
for s, e in ALL + POLY:
    for qd in (False, True):
        for qs in (False, True):
            w, vw = (128 if qd else 64), (128 if qs else 64)
            n, m = w // e, vw // e
            nm = f"vcopy{'q' if qd else ''}_lane{'q' if qs else ''}_{s}{e}"
            body = f"sel := b >>u (ZeroExtend16(lane2) * {e})\n" + loop(n, [f"{out(e)} := lane1 == j ? sel[{e - 1}:0] : {el('a', e)}"])
            emit("dup", nm, [("a", f"bv{w}"), ("lane1", f"imm{immw(n - 1)} in 0 to {n - 1}"), ("b", f"bv{vw}"), ("lane2", f"imm{immw(m - 1)} in 0 to {m - 1}")],
                 w, "ins", "ins", body)
# Bit reverse within each byte.
unary("bits", "vrbit", mn("rbit"), "basic", [("s", 8), ("u", 8), ("p", 8)],
      lambda a, s, e: "Concat(" + ", ".join(f"a[j*8+{k}]" for k in range(8)) + ")")
