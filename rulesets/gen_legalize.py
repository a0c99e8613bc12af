#!/usr/bin/env python3
"""Writes the `legalize` section of the hand-written rulesets/x86_hand.egg
(between its markers), the rediscovery corpus, so that `--rules
rulesets/x86_hand.egg` compiles wide vectors too. The rule files the
compiler loads by default (rulesets/x86.egg, arm.egg and hvx.egg) get their
legalization from `misaal synth` (synth/src/legalize), for each target's
registers; ARM's and HVX's hand files no longer carry any.

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

if "--target" in sys.argv and sys.argv[sys.argv.index("--target") + 1] != "x86":
    sys.exit("gen_legalize.py writes x86_hand.egg only: ARM's and HVX's legalization is "
             "synthesized (`misaal synth --target arm|hvx` writes it into arm.egg and hvx.egg)")
TARGET = "x86"
# x86 splits while every half is at least 128 bits (an xmm register).
REG = 128

# Halves of n lanes: every operand piece at least 128 bits (a register),
# the whole at most 4096 bits.
LANES = "(in ?n 4 8 16 32 64 128)"

def lo(ty_s, bw, x):
    return f"(slice (t {ty_s} {bw} ?n) (* 2 ?n) 0 1 {x})"

def hi(ty_s, bw, x):
    return f"(slice (t {ty_s} {bw} ?n) (* 2 ?n) ?n 1 {x})"

def rule(name, lhs_head, args, out_s, out_bw, rhs_head, conds, comment=None):
    """args: list of (var, sign, bits) for the vector operands."""
    a = " ".join(v for v, _, _ in args)
    pieces = (lo, hi)
    half = lambda side: " ".join(pieces[side](s, b, v) for v, s, b in args)
    join = f"(concat (t {out_s} {out_bw} ?n) ?n"
    rhs = (f"{join}\n"
           f"           ({rhs_head} {half(0)})\n"
           f"           ({rhs_head} {half(1)}))")
    # Element widths are ?bw or (* 2 ?bw); bools (1) do not bound the split.
    factors = [2 if b == "(* 2 ?bw)" else 1 for _, _, b in args + [(None, None, out_bw)] if b != "1"]
    # Every half at least 128 bits.
    when = f"{LANES} (>= (* ?n ?bw) {REG}) (<= (* ?n ?bw) {2048 // max(factors)})" + (" " + conds if conds else "")
    head = f"; {comment}\n" if comment else ""
    return f"{head}(rewrite ({lhs_head} {a})\n         {rhs}\n  :when ({when}) :name \"{TARGET}.split-{name}\" :ruleset {TARGET})\n"

out = []

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
        out.append(rule(op, f"{op} (t ?sign ?bw (* 2 ?n)) ?sign2 ?bw2", [("?a", "?sign", "?bw")], "?sign2", "?bw2",
                        f"{op} (t ?sign ?bw ?n) ?sign2 ?bw2", "(in ?sign2 0 1) (in ?bw2 8 16 32 64) (!= ?bw ?bw2) (>= (* ?n ?bw2) 128) (<= (* ?n ?bw2) 2048)"))
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

# A broadcast splits into two broadcasts of the same scalar.
out.append("(rewrite (broadcast (t ?sign ?bw (* 2 ?n)) ?x)\n"
           "         (concat (t ?sign ?bw ?n) ?n (broadcast (t ?sign ?bw ?n) ?x) (broadcast (t ?sign ?bw ?n) ?x))\n"
           f"  :when ({LANES} (>= (* ?n ?bw) {REG}) (<= (* ?n ?bw) 2048)) :name \"{TARGET}.split-broadcast\" :ruleset {TARGET})\n")
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
section = BEGIN + intro + "\n".join(out) + END
if BEGIN in text:
    text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda m: section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + section
path.write_text(text)
print(f"wrote {len(out)} rule groups to {path}")
