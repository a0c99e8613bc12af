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
