#!/usr/bin/env python3
"""Writes the `legalize` section of the hand-written rulesets/x86_hand.egg
(between its markers); with --target arm or --target hvx, that of
rulesets/arm_hand.egg or hvx_hand.egg (rulesets/x86.egg, arm.egg and hvx.egg
are written by `misaal synth`).

Legalization splits a Halide op on vectors wider than a register into the
same op on the two halves, concatenated: op<2n>(a, b) = concat(op<n>(lo a,
lo b), op<n>(hi a, hi b)), where lo/hi are slices. Such a split holds for
any op whose output lane i reads only lane i of each operand (and for
reductions, whole groups), so one rule per op shape. They are rules like
any other: `misaal verify` proves each at every instantiation, and the
compiler loads only proved ones. Run after editing OPS; the output is
committed, so the rule file stays the one source the compiler reads.
"""
import pathlib, re, sys

# --target arm writes rulesets/arm_hand.egg's section: NEON has 64-bit D and
# 128-bit Q registers, so an op splits while its widest half (operands or
# result) is at least a Q register, down to halves of 64 bits (a widening
# op's 64-bit operands, a narrowing op's 64-bit result). x86 splits while
# every half is at least 128 bits.
TARGET = sys.argv[sys.argv.index("--target") + 1] if "--target" in sys.argv else "x86"
assert TARGET in ("x86", "arm", "hvx"), TARGET
# --target hvx: HVX registers are 1024 bits (pairs 2048), so an op splits
# while every half is at least one vector register, as on x86.
REG = 1024 if TARGET == "hvx" else 128

# Halves of n lanes: every operand piece at least 128 bits (a register),
# the whole at most 4096 bits.
LANES = "(in ?n 4 8 16 32 64 128)"

def lo(ty_s, bw, x):
    return f"(slice (t {ty_s} {bw} ?n) (* 2 ?n) 0 1 {x})"

def hi(ty_s, bw, x):
    return f"(slice (t {ty_s} {bw} ?n) (* 2 ?n) ?n 1 {x})"

def even(ty_s, bw, x):
    return f"(slice (t {ty_s} {bw} ?n) (* 2 ?n) 0 2 {x})"

def odd(ty_s, bw, x):
    return f"(slice (t {ty_s} {bw} ?n) (* 2 ?n) 1 2 {x})"

# Lane-wise op shapes met by rule() (halves splits only), for pad_rules().
SHAPES = []

def rule(name, lhs_head, args, out_s, out_bw, rhs_head, conds, comment=None, least=None, parity=None):
    """args: list of (var, sign, bits) for the vector operands. With
    `parity`, the halves are the even and odd lanes, interleaved back."""
    parity = PARITY if parity is None else parity
    if not parity:
        SHAPES.append((name, lhs_head, args, out_s, out_bw, rhs_head, conds))
    a = " ".join(v for v, _, _ in args)
    pieces = (even, odd) if parity else (lo, hi)
    half = lambda side: " ".join(pieces[side](s, b, v) for v, s, b in args)
    join = f"(interleave (t {out_s} {out_bw} ?n)" if parity else f"(concat (t {out_s} {out_bw} ?n) ?n"
    rhs = (f"{join}\n"
           f"           ({rhs_head} {half(0)})\n"
           f"           ({rhs_head} {half(1)}))")
    # Element widths are ?bw or (* 2 ?bw); bools (1) do not bound the split.
    factors = [2 if b == "(* 2 ?bw)" else 1 for _, _, b in args + [(None, None, out_bw)] if b != "1"]
    # x86: every half at least 128 bits; ARM: the widest half at least 128.
    least = least or ("(* 2 ?bw)" if TARGET == "arm" and max(factors) == 2 else "?bw")
    when = f"{LANES} (>= (* ?n {least}) {REG}) (<= (* ?n ?bw) {2048 // max(factors)})" + (" " + conds if conds else "")
    head = f"; {comment}\n" if comment else ""
    kind = "parity" if parity else "split"
    return f"{head}(rewrite ({lhs_head} {a})\n         {rhs}\n  :when ({when}) :name \"{TARGET}.{kind}-{name}\" :ruleset {TARGET})\n"

out = []
# HVX also splits by parity: op(a, b) = interleave(op(even a, even b),
# op(odd a, odd b)). HVX widening instructions give the even and odd lanes
# in two registers and its narrowing ones take them so, as Halide's own
# HVX backend keeps them: with these splits, a chain of widening, lane-wise
# and narrowing ops needs no vshuff/vdeal to restore lane order between.
PARITY = False

def lane_rules():
    # Binary ops of one type <S, E, N>.
    for op in ["add", "sub", "mul", "div", "mod", "min", "max", "and", "or", "xor", "saturating_add",
               "saturating_sub", "halving_add", "halving_sub", "rounding_halving_add"]:
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "?bw"), ("?b", "?sign", "?bw")], "?sign", "?bw",
                        f"{op} (t ?sign ?bw ?n)", ""))
    # Unsigned results.
    out.append(rule("absd", "absd (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "?bw"), ("?b", "?sign", "?bw")], "0", "?bw", "absd (t ?sign ?bw ?n)", ""))
    out.append(rule("abs", "abs (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "?bw")], "0", "?bw", "abs (t ?sign ?bw ?n)", ""))
    out.append(rule("not", "not (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "?bw")], "?sign", "?bw", "not (t ?sign ?bw ?n)", ""))
    # Shifts <S, E, N, S2>: the amount has signedness S2.
    for op in ["shl", "shr", "rounding_shift_left", "rounding_shift_right"]:
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2", [("?a", "?sign", "?bw"), ("?b", "?sign2", "?bw")], "?sign", "?bw",
                        f"{op} (t ?sign ?bw ?n) ?sign2", "(in ?sign2 0 1)"))
    # Widening: the result has twice the bits.
    for op, rs in [("widening_add", "?sign"), ("widening_sub", "1")]:
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "?bw"), ("?b", "?sign", "?bw")], rs, "(* 2 ?bw)",
                        f"{op} (t ?sign ?bw ?n)", "(<= ?bw 32)"))
    out.append(rule("widening_mul", "widening_mul (t ?sign ?bw (* 2 ?n)) ?sign2", [("?a", "?sign", "?bw"), ("?b", "?sign2", "?bw")],
                    "(- (+ ?sign ?sign2) (* ?sign ?sign2))", "(* 2 ?bw)", "widening_mul (t ?sign ?bw ?n) ?sign2", "(in ?sign2 0 1) (<= ?bw 32)"))
    for op in ["widening_shift_left", "widening_shift_right"]:
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2", [("?a", "?sign", "?bw"), ("?b", "?sign2", "?bw")], "?sign", "(* 2 ?bw)",
                        f"{op} (t ?sign ?bw ?n) ?sign2", "(in ?sign2 0 1) (<= ?bw 32)"))
    for op in ["widen_right_add", "widen_right_sub", "widen_right_mul"]:
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "(* 2 ?bw)"), ("?b", "?sign", "?bw")], "?sign", "(* 2 ?bw)",
                        f"{op} (t ?sign ?bw ?n)", "(<= ?bw 32)"))
    # Conversions <S, E, N, S2, E2>.
    for op in ["cast", "saturating_cast"]:
        if TARGET == "x86":
            out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2 ?bw2", [("?a", "?sign", "?bw")], "?sign2", "?bw2",
                            f"{op} (t ?sign ?bw ?n) ?sign2 ?bw2", "(in ?sign2 0 1) (in ?bw2 8 16 32 64) (!= ?bw ?bw2) (>= (* ?n ?bw2) 128) (<= (* ?n ?bw2) 2048)"))
        elif TARGET == "hvx":
            # Every half a register: the narrower side's half at least 1024 bits.
            out.append(rule(op + "-widen", f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2 ?bw2", [("?a", "?sign", "?bw")], "?sign2", "?bw2",
                            f"{op} (t ?sign ?bw ?n) ?sign2 ?bw2", "(in ?sign2 0 1) (in ?bw2 8 16 32 64) (< ?bw ?bw2) (<= (* ?n ?bw2) 2048)"))
            out.append(rule(op + "-narrow", f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2 ?bw2", [("?a", "?sign", "?bw")], "?sign2", "?bw2",
                            f"{op} (t ?sign ?bw ?n) ?sign2 ?bw2", "(in ?sign2 0 1) (in ?bw2 8 16 32 64) (> ?bw ?bw2) (>= (* ?n ?bw2) 1024)"))
        else:
            # Widening: the result's half is the wider; narrowing: the operand's.
            out.append(rule(op + "-widen", f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2 ?bw2", [("?a", "?sign", "?bw")], "?sign2", "?bw2",
                            f"{op} (t ?sign ?bw ?n) ?sign2 ?bw2", "(in ?sign2 0 1) (in ?bw2 8 16 32 64) (< ?bw ?bw2) (<= (* ?n ?bw2) 2048)", least="?bw2"))
            out.append(rule(op + "-narrow", f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2 ?bw2", [("?a", "?sign", "?bw")], "?sign2", "?bw2",
                            f"{op} (t ?sign ?bw ?n) ?sign2 ?bw2", "(in ?sign2 0 1) (in ?bw2 8 16 32 64) (> ?bw ?bw2)"))
    # Fixed-point multiplies: the shift amount q is unsigned.
    for op in ["mul_shift_right", "rounding_mul_shift_right"]:
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "?bw"), ("?b", "?sign", "?bw"), ("?q", "0", "?bw")], "?sign", "?bw",
                        f"{op} (t ?sign ?bw ?n)", ""))
    # Comparisons give one bool per lane; select takes them.
    for op in ["lt", "le", "gt", "ge", "eq", "ne"]:
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n))", [("?a", "?sign", "?bw"), ("?b", "?sign", "?bw")], "0", "1",
                        f"{op} (t ?sign ?bw ?n)", ""))
    out.append(rule("select", "select (t ?sign ?bw (* 2 ?n))", [("?c", "0", "1"), ("?a", "?sign", "?bw"), ("?b", "?sign", "?bw")], "?sign", "?bw",
                    "select (t ?sign ?bw ?n)", ""))

lane_rules()
if TARGET == "hvx":
    PARITY = True
    lane_rules()
    PARITY = False

# HVX: an op on vectors narrower than a register (u8x64, i16x32 operands)
# runs on a register holding the value twice, and its low part is the
# result: op<n>(a, b) = slice lo n (op<2n>(concat(a, a), concat(b, b)))
# ("pad"). The duplicate is what makes it provable: no lane is undefined.
# A lane-wise op keeps the halves equal, op<2n>(concat(a, a), concat(b, b))
# = concat(op<n>(a, b), op<n>(a, b)) ("dup"), so a chain of padded ops
# stays in registers: the next op's concat(x, x) is the last op's <2n>
# form. (Rooted at the op, not at concat: the compiler loads rules by the
# ops a kernel has, and every dup rule rooted at concat made max_pool load
# 351 instances and spend seconds settling their verdicts.) Both apply while every part of the <2n> op is at most a pair, some
# operand or result of the <n> op is narrower than a register, and that
# narrowest part is at least 256 bits (u8x32); a 256-bit op pads twice.
def pad(name, head_n, head_2n, args, out_s, out_bw, widest, narrowest, conds):
    cc = lambda s, b, v: f"(concat (t {s} {b} ?n) ?n {v} {v})"
    a = " ".join(v for v, _, _ in args)
    padded = f"({head_2n} {' '.join(cc(s, b, v) for v, s, b in args)})"
    when = (f"{LANES} (<= (* ?n {widest}) 1024) (< (* ?n {narrowest}) 1024) (>= (* ?n {narrowest}) 256)"
            + (" " + conds if conds else ""))
    out.append(f"(rewrite ({head_n} {a})\n"
               f"         (slice (t {out_s} {out_bw} ?n) (* 2 ?n) 0 1 {padded})\n"
               f"  :when ({when}) :name \"{TARGET}.pad-{name}\" :ruleset {TARGET})\n"
               f"(rewrite {padded}\n"
               f"         (concat (t {out_s} {out_bw} ?n) ?n ({head_n} {a}) ({head_n} {a}))\n"
               f"  :when ({when}) :name \"{TARGET}.dup-{name}\" :ruleset {TARGET})\n")

if TARGET == "hvx":
    for name, head_2n, args, out_s, out_bw, head_n, conds in list(SHAPES):
        bws = [b for _, _, b in args] + [out_bw]
        if "1" in bws or name.startswith("cast") or name.startswith("saturating_cast"):
            continue
        widest = "(* 2 ?bw)" if "(* 2 ?bw)" in bws else "?bw"
        pad(name, head_n, head_2n, args, out_s, out_bw, widest, "?bw", conds)
    for op in ["cast", "saturating_cast"]:
        head_n, head_2n = f"{op} (t ?sign ?bw ?n) ?sign2 ?bw2", f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2 ?bw2"
        pad(op + "-widen", head_n, head_2n, [("?a", "?sign", "?bw")], "?sign2", "?bw2", "?bw2", "?bw",
            "(in ?sign2 0 1) (in ?bw2 8 16 32) (< ?bw ?bw2)")
        pad(op + "-narrow", head_n, head_2n, [("?a", "?sign", "?bw")], "?sign2", "?bw2", "?bw", "?bw2",
            "(in ?sign2 0 1) (in ?bw2 8 16 32) (> ?bw ?bw2)")
    out.append("; A broadcast narrower than a register is the low part of a wider one.\n"
               "(rewrite (broadcast (t ?sign ?bw ?n) ?x)\n"
               "         (slice (t ?sign ?bw ?n) (* 2 ?n) 0 1 (broadcast (t ?sign ?bw (* 2 ?n)) ?x))\n"
               f"  :when ({LANES} (in ?bw 8 16 32) (< (* ?n ?bw) 1024) (>= (* ?n ?bw) 256)) :name \"{TARGET}.pad-broadcast\" :ruleset {TARGET})\n"
               "(rewrite (broadcast (t ?sign ?bw (* 2 ?n)) ?x)\n"
               "         (concat (t ?sign ?bw ?n) ?n (broadcast (t ?sign ?bw ?n) ?x) (broadcast (t ?sign ?bw ?n) ?x))\n"
               f"  :when ({LANES} (in ?bw 8 16 32) (< (* ?n ?bw) 1024) (>= (* ?n ?bw) 256)) :name \"{TARGET}.dup-broadcast\" :ruleset {TARGET})\n")

# A broadcast splits into two broadcasts of the same scalar.
out.append("(rewrite (broadcast (t ?sign ?bw (* 2 ?n)) ?x)\n"
           "         (concat (t ?sign ?bw ?n) ?n (broadcast (t ?sign ?bw ?n) ?x) (broadcast (t ?sign ?bw ?n) ?x))\n"
           f"  :when ({LANES} (>= (* ?n ?bw) {REG}) (<= (* ?n ?bw) 2048)) :name \"{TARGET}.split-broadcast\" :ruleset {TARGET})\n")
if TARGET == "hvx":
    out.append("(rewrite (broadcast (t ?sign ?bw (* 2 ?n)) ?x)\n"
               "         (interleave (t ?sign ?bw ?n) (broadcast (t ?sign ?bw ?n) ?x) (broadcast (t ?sign ?bw ?n) ?x))\n"
               f"  :when ({LANES} (>= (* ?n ?bw) {REG}) (<= (* ?n ?bw) 2048)) :name \"{TARGET}.parity-broadcast\" :ruleset {TARGET})\n")
    out.append("; The even (odd) lanes of an interleave are its first (second) operand.\n"
               "(rewrite (slice (t ?sign ?bw ?n) (* 2 ?n) 0 2 (interleave (t ?sign ?bw ?n) ?a ?b)) ?a\n"
               f"  :when ({LANES} (in ?bw 1 8 16 32 64) (<= (* ?n ?bw) 2048)) :name \"{TARGET}.even-interleave\" :ruleset {TARGET})\n"
               "(rewrite (slice (t ?sign ?bw ?n) (* 2 ?n) 1 2 (interleave (t ?sign ?bw ?n) ?a ?b)) ?b\n"
               f"  :when ({LANES} (in ?bw 1 8 16 32 64) (<= (* ?n ?bw) 2048)) :name \"{TARGET}.odd-interleave\" :ruleset {TARGET})\n")
# Reductions by groups of F: each half of the result reduces its own half.
for op in ["vector_reduce_add", "vector_reduce_saturating_add", "vector_reduce_min", "vector_reduce_max"]:
    out.append(f"(rewrite ({op} (t ?sign ?bw (* 2 ?n)) ?f ?a)\n"
               f"         (concat (t ?sign ?bw ?n) ?n\n"
               f"           ({op} (t ?sign ?bw ?n) ?f (slice (t ?sign ?bw (* ?n ?f)) (* 2 (* ?n ?f)) 0 1 ?a))\n"
               f"           ({op} (t ?sign ?bw ?n) ?f (slice (t ?sign ?bw (* ?n ?f)) (* 2 (* ?n ?f)) (* ?n ?f) 1 ?a)))\n"
               f"  :when ({LANES} (in ?f 2 4) (>= (* ?n ?bw) {REG}) (<= (* (* ?n ?f) ?bw) 2048)) :name \"{TARGET}.split-{op}\" :ruleset {TARGET})\n")
# Slicing a concatenation at a half gives that half back.
out.append("; A half of a concatenation is that half.\n"
           "(rewrite (slice (t ?sign ?bw ?n) (* 2 ?n) 0 1 (concat (t ?sign ?bw ?n) ?n ?a ?b)) ?a\n"
           f"  :when ({LANES} (in ?bw 1 8 16 32 64) (<= (* ?n ?bw) 2048)) :name \"{TARGET}.slice-concat-lo\" :ruleset {TARGET})\n"
           "(rewrite (slice (t ?sign ?bw ?n) (* 2 ?n) ?n 1 (concat (t ?sign ?bw ?n) ?n ?a ?b)) ?b\n"
           f"  :when ({LANES} (in ?bw 1 8 16 32 64) (<= (* ?n ?bw) 2048)) :name \"{TARGET}.slice-concat-hi\" :ruleset {TARGET})\n")

BEGIN = "; == legalize (generated by rulesets/gen_legalize.py; edit it, not this) ==\n"
END = "; == end legalize ==\n"
path = pathlib.Path(__file__).with_name(f"{TARGET}_hand.egg")
text = path.read_text()
intro = ("; Ops on vectors wider than a register split into halves, recursively,\n"
         "; until each half fits a register the target has.\n")
if TARGET == "hvx":
    intro += ("; HVX also splits them into even and odd lanes (`parity-*`): its widening\n"
              "; instructions give those two halves, and its narrowing ones take them.\n")
section = BEGIN + intro + "\n".join(out) + END
if BEGIN in text:
    text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda m: section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + section
path.write_text(text)
print(f"wrote {len(out)} rule groups to {path}")
