"""Random integer pipelines as data: the grammar of benchmarks/random/.

A *program* is a JSON-able dict (generate.py writes one beside every Stmt,
minimize.py shrinks them), turned into Halide by build.py:

    {"inputs":  [{"name": "in0", "type": "u8"}, ...],      2-D buffers
     "weights": [{"name": "w0", "type": "i8"}, ...],       1-D, indexed by the RDom
     "params":  [{"name": "p0", "type": "u8", "value": 3}, ...],
     "stages":  [stage, ...],       the last one is the output
     "W": int, "H": int,            the output's extents
     "schedule": {"out": {...}, "stages": [{...}, ...]}}

A stage is {"type": T, "expr": E} (pure) or {"type": T, "reduce": OP,
"axis": 0|1, "extent": K, "init": E, "body": E} with OP one of sum,
satsum, max, min, dot (dot: sum of body * weight(r)). Types are the strings
u8 i8 u16 i16 u32 i32 u64 i64. An expression E is a list:

    ["in", name, dx, dy, r]      input at (x+dx, y+dy), plus the RDom var
                                 on the reduction's axis when r is 1
    ["f", j, dx, dy, r]          stage j < this one, the same way
    ["wt", name]                 weight(r), in a reduction body only
    ["p", name]                  a scalar parameter
    ["c", T, value]              a constant
    ["cast", T, E] / ["satcast", T, E]
    ["bin", op, A, B]            add sub mul min max and or xor
    ["divc", T, A, c] / ["modc", T, A, c]   by a nonzero constant
    ["fp", op, A, B]             widening_{add,sub,mul}, saturating_{add,sub},
                                 halving_{add,sub}, rounding_halving_add, absd
    ["msr", rounding, A, B, q]   (rounding_)mul_shift_right
    ["shift", op, A, AMOUNT]     op: shl shr rshr rshl wshl (rounding and
                                 widening shifts); AMOUNT is ["c", T, k],
                                 ["p", name] or an expression, masked to
                                 [0, bits) by build.py
    ["sel", cmp, C1, C2, A, B]   select(C1 cmp C2, A, B)
    ["abs", A]

Every program this module makes is checked by `check()`: value intervals
show that no signed 32/64-bit add, sub, mul or left shift overflows (Halide
treats that as undefined), so a mismatch is never Halide's freedom.
"""

import random

TYPES = ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64"]
# Types a stage or a buffer may have (64-bit only inside expressions).
STAGE_TYPES = ["u8", "i8", "u16", "i16", "u32", "i32"]
VECTORS = [2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 128]
TAILS = ["auto", "guard", "shift"]


def signed(t):
    return t[0] == "i"


def bits(t):
    return int(t[1:])


def mk(s, b):
    return ("i" if s else "u") + str(b)


def trange(t):
    b = bits(t)
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if signed(t) else (0, (1 << b) - 1)


def wide(t, s=None):
    return mk(signed(t) if s is None else s, 2 * bits(t))


def narrow(t, s=None):
    return mk(signed(t) if s is None else s, bits(t) // 2)


def unsigned_of(t):
    return mk(False, bits(t))


# ----- typing and intervals ------------------------------------------------

class Invalid(Exception):
    """A program Halide would reject or that could overflow a signed
    32/64-bit op (undefined in Halide)."""


class Env:
    def __init__(self, prog, stage=None):
        self.inputs = {i["name"]: i["type"] for i in prog["inputs"]}
        self.weights = {w["name"]: w["type"] for w in prog.get("weights", [])}
        self.params = {p["name"]: (p["type"], p["value"]) for p in prog.get("params", [])}
        self.stages = prog["stages"]
        self.stage = stage
        self.in_body = False
        # Each stage's interval, filled in order by check().
        self.ranges = {}


def fits(lo, hi, t):
    a, b = trange(t)
    return a <= lo and hi <= b


def wrap(lo, hi, t):
    """Interval of a result of type t that may wrap (unsigned, or 8/16-bit)."""
    if fits(lo, hi, t):
        return lo, hi
    if signed(t) and bits(t) >= 32:
        raise Invalid("signed %s overflow possible in [%d, %d]" % (t, lo, hi))
    return trange(t)


def hull(*xs):
    return min(x[0] for x in xs), max(x[1] for x in xs)


def mul_iv(a, b):
    ps = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    return min(ps), max(ps)


def floordiv_iv(a, c):
    # Halide's division rounds to negative infinity for c > 0 and is
    # Euclidean for c < 0; monotone in the numerator either way.
    qs = [euclid_div(a[0], c), euclid_div(a[1], c)]
    return min(qs), max(qs)


def euclid_div(a, c):
    q = a // c if c > 0 else -(a // -c)
    if a - q * c < 0:
        q += 1 if c < 0 else -1
    return q


def typed(e, env):
    """(type, (lo, hi)) of expression e, or Invalid."""
    k = e[0]
    if k == "in":
        if e[1] not in env.inputs:
            raise Invalid("no input " + e[1])
        if e[4] and not env.in_body:
            raise Invalid("RDom outside a reduction body")
        t = env.inputs[e[1]]
        return t, trange(t)
    if k == "f":
        if not (0 <= e[1] < env.stage):
            raise Invalid("stage %d reads stage %d" % (env.stage, e[1]))
        if e[4] and not env.in_body:
            raise Invalid("RDom outside a reduction body")
        return env.stages[e[1]]["type"], env.ranges[e[1]]
    if k == "wt":
        if not env.in_body:
            raise Invalid("weight outside a reduction body")
        t = env.weights[e[1]]
        return t, trange(t)
    if k == "p":
        t, v = env.params[e[1]]
        return t, (v, v)
    if k == "c":
        if not fits(e[2], e[2], e[1]):
            raise Invalid("constant out of range")
        return e[1], (e[2], e[2])
    if k in ("cast", "satcast"):
        t = e[1]
        _, r = typed(e[2], env)
        if k == "satcast":
            lo, hi = trange(t)
            return t, (min(max(r[0], lo), hi), max(min(r[1], hi), lo))
        return t, (r if fits(r[0], r[1], t) else trange(t))
    if k == "bin":
        op = e[1]
        ta, ra = typed(e[2], env)
        tb, rb = typed(e[3], env)
        if ta != tb:
            raise Invalid("bin operands differ")
        if op == "add":
            return ta, wrap(ra[0] + rb[0], ra[1] + rb[1], ta)
        if op == "sub":
            return ta, wrap(ra[0] - rb[1], ra[1] - rb[0], ta)
        if op == "mul":
            return ta, wrap(*mul_iv(ra, rb), ta)
        if op == "min":
            return ta, (min(ra[0], rb[0]), min(ra[1], rb[1]))
        if op == "max":
            return ta, (max(ra[0], rb[0]), max(ra[1], rb[1]))
        if op in ("and", "or", "xor"):
            if op == "and" and not signed(ta):
                return ta, (0, min(ra[1], rb[1]))
            return ta, trange(ta)
        raise Invalid("unknown bin " + op)
    if k in ("divc", "modc"):
        t, r = typed(e[2], env)
        c = e[3]
        if t != e[1] or c == 0 or not fits(c, c, t) or (signed(t) and c == -1):
            raise Invalid("bad constant divisor")
        if k == "divc":
            return t, floordiv_iv(r, c)
        return t, (0, abs(c) - 1)
    if k == "fp":
        op = e[1]
        ta, ra = typed(e[2], env)
        tb, rb = typed(e[3], env)
        if bits(ta) != bits(tb):
            raise Invalid("fp operand widths differ")
        if op in ("widening_add", "widening_sub", "widening_mul"):
            if bits(ta) > 32:
                raise Invalid("no 128-bit type")
            if op == "widening_add":
                if ta != tb:
                    raise Invalid("widening_add operands differ")
                return wide(ta), (ra[0] + rb[0], ra[1] + rb[1])
            if op == "widening_sub":
                if ta != tb:
                    raise Invalid("widening_sub operands differ")
                return wide(ta, True), (ra[0] - rb[1], ra[1] - rb[0])
            return wide(ta, signed(ta) or signed(tb)), mul_iv(ra, rb)
        if ta != tb:
            raise Invalid("fp operands differ")
        if op == "saturating_add":
            lo, hi = trange(ta)
            return ta, (max(lo, min(hi, ra[0] + rb[0])), max(lo, min(hi, ra[1] + rb[1])))
        if op == "saturating_sub":
            lo, hi = trange(ta)
            return ta, (max(lo, min(hi, ra[0] - rb[1])), max(lo, min(hi, ra[1] - rb[0])))
        if op == "halving_add":
            return ta, ((ra[0] + rb[0]) >> 1, (ra[1] + rb[1]) >> 1)
        if op == "rounding_halving_add":
            return ta, ((ra[0] + rb[0] + 1) >> 1, (ra[1] + rb[1] + 1) >> 1)
        if op == "halving_sub":
            return ta, wrap((ra[0] - rb[1]) >> 1, (ra[1] - rb[0]) >> 1, ta)
        if op == "absd":
            return unsigned_of(ta), (0, max(abs(ra[1] - rb[0]), abs(ra[0] - rb[1])))
        raise Invalid("unknown fp " + op)
    if k == "msr":
        ta, _ = typed(e[2], env)
        tb, _ = typed(e[3], env)
        if ta != tb or bits(ta) > 32 or not (0 <= e[4] < 2 * bits(ta)):
            raise Invalid("bad mul_shift_right")
        return ta, trange(ta)
    if k == "shift":
        op = e[1]
        ta, ra = typed(e[2], env)
        amt = shift_amount_range(e[3], env, ta)
        if op == "shr":
            lo = ra[0] >> amt[1] if ra[0] >= 0 else ra[0] >> amt[0]
            hi = ra[1] >> amt[0] if ra[1] >= 0 else ra[1] >> amt[1]
            return ta, (lo, hi)
        if op == "rshr":
            return ta, trange(ta) if ra[0] < 0 else (0, ra[1])
        if op == "shl":
            return ta, wrap(*mul_iv(ra, (1, 1 << amt[1])), ta) if ra[0] < 0 else wrap(ra[0], ra[1] << amt[1], ta)
        if op == "rshl":
            # rounding_shift_left saturates nothing: it is x << y for y >= 0.
            return ta, wrap(min(ra[0], ra[0] << amt[1]), max(ra[1], ra[1] << amt[1]), ta)
        if op == "wshl":
            if bits(ta) > 32:
                raise Invalid("no 128-bit type")
            return wide(ta), (min(ra[0], ra[0] << amt[1]), max(ra[1], ra[1] << amt[1]))
        raise Invalid("unknown shift " + op)
    if k == "sel":
        t1, _ = typed(e[2], env)
        t2, _ = typed(e[3], env)
        ta, ra = typed(e[4], env)
        tb, rb = typed(e[5], env)
        if t1 != t2 or ta != tb or e[1] not in ("lt", "le", "eq", "ne", "gt", "ge"):
            raise Invalid("bad select")
        return ta, hull(ra, rb)
    if k == "abs":
        ta, ra = typed(e[1], env)
        if not signed(ta):
            raise Invalid("abs of unsigned")
        return unsigned_of(ta), (0, max(abs(ra[0]), abs(ra[1])))
    raise Invalid("unknown node %r" % (k,))


def shift_amount_range(a, env, t):
    """Shift amounts are masked into [0, bits) (build.py), and a constant
    must already be there."""
    b = bits(t)
    if a[0] == "c":
        if not (0 <= a[2] < b):
            raise Invalid("constant shift out of range")
        return a[2], a[2]
    ta, r = typed(a, env)
    if bits(ta) != b:
        raise Invalid("shift amount width differs")
    if a[0] == "p":
        v = r[0] & (b - 1)
        return v, v
    return 0, b - 1


def check(prog):
    """Raises Invalid unless every stage is well typed and overflow-free;
    returns each stage's interval."""
    env = None
    ranges = {}
    for i, s in enumerate(prog["stages"]):
        env = Env(prog, i)
        env.ranges = ranges
        if "reduce" in s:
            t0, r0 = typed(s["init"], env)
            env.in_body = True
            t1, r1 = typed(s["body"], env)
            env.in_body = False
            t = s["type"]
            if t0 != t or t1 != t:
                raise Invalid("reduction types differ")
            k = s["extent"]
            op = s["reduce"]
            if op == "sum":
                r = wrap(r0[0] + k * min(0, r1[0]), r0[1] + k * max(0, r1[1]), t)
            elif op == "dot":
                wt = next(w["type"] for w in prog["weights"] if w["name"] == s["weight"])
                if wt != t and bits(wt) > bits(t):
                    raise Invalid("weight wider than the accumulator")
                wr = trange(wt) if fits(*trange(wt), t) else trange(t)
                p = mul_iv(r1, wr)
                r = wrap(r0[0] + k * min(0, p[0]), r0[1] + k * max(0, p[1]), t)
            elif op == "satsum":
                r = trange(t)
            elif op in ("max", "min"):
                r = hull(r0, r1)
            else:
                raise Invalid("unknown reduction " + op)
        else:
            t, r = typed(s["expr"], env)
            if t != s["type"]:
                raise Invalid("stage type differs")
        ranges[i] = r
    return ranges


# ----- generation ----------------------------------------------------------

class Gen:
    """Type-directed random expressions for one program."""

    def __init__(self, rng, prog, stage):
        self.rng = rng
        self.prog = prog
        self.stage = stage
        self.body = False
        self.env = Env(prog, stage)
        self.env.ranges = prog["_ranges"]

    def ok(self, e, want):
        self.env.in_body = self.body
        self.env.weights = {w["name"]: w["type"] for w in self.prog["weights"]}
        try:
            t, _ = typed(e, self.env)
        except Invalid:
            return False
        return t == want

    def offset(self):
        r = self.rng.random()
        return 0 if r < 0.5 else (1 if r < 0.8 else 2)

    def leaf(self, t):
        """A leaf of type t: a load (cast when its type differs), a
        parameter or a constant."""
        rng = self.rng
        srcs = [("in", i["name"], i["type"]) for i in self.prog["inputs"]]
        srcs += [("f", j, self.prog["stages"][j]["type"]) for j in range(self.stage)]
        choice = rng.random()
        if choice < 0.12:
            lo, hi = trange(t)
            v = rng.choice([lo, hi, 0, 1, rng.randint(max(lo, -300), min(hi, 300)), rng.randint(lo, hi)])
            return ["c", t, v]
        if choice < 0.18:
            ps = [p for p in self.prog["params"] if p["type"] == t]
            if ps:
                return ["p", rng.choice(ps)["name"]]
        if self.body and self.prog.get("weights") and rng.random() < 0.15:
            w = rng.choice(self.prog["weights"])
            e = ["wt", w["name"]]
            return e if w["type"] == t else [rng.choice(["cast", "cast", "satcast"]), t, e]
        # Prefer sources of the wanted type; the last stage most.
        same = [s for s in srcs if s[2] == t]
        src = rng.choice(same) if same and rng.random() < 0.7 else rng.choice(srcs)
        r = 1 if self.body and rng.random() < 0.7 else 0
        e = [src[0], src[1], self.offset(), self.offset(), r]
        if src[2] != t:
            e = [rng.choice(["cast", "cast", "satcast"]), t, e]
        return e

    def expr(self, t, depth):
        """An expression of type t, at most `depth` deep."""
        if depth <= 1 or self.rng.random() < 0.15:
            return self.leaf(t)
        for _ in range(12):
            e = self.node(t, depth - 1)
            if e is not None and self.ok(e, t):
                return e
        return self.leaf(t)

    def node(self, t, d):
        rng = self.rng
        b, s = bits(t), signed(t)
        kinds = ["bin", "bin", "fp", "sat", "shift", "sel", "cast", "satcast", "divc", "msr", "widen", "absd", "abs"]
        k = rng.choice(kinds)
        if k == "bin":
            op = rng.choice(["add", "sub", "mul", "min", "max", "add", "and", "or", "xor"])
            return ["bin", op, self.expr(t, d), self.expr(t, d)]
        if k in ("fp", "sat"):
            op = rng.choice(["saturating_add", "saturating_sub"] if k == "sat" else
                            ["halving_add", "halving_sub", "rounding_halving_add", "saturating_add"])
            return ["fp", op, self.expr(t, d), self.expr(t, d)]
        if k == "widen":
            if b < 16:
                return None
            op = rng.choice(["widening_add", "widening_sub", "widening_mul", "widening_mul"])
            if op == "widening_sub" and not s:
                return None
            if op == "widening_add":
                n = narrow(t)
                return ["fp", op, self.expr(n, d), self.expr(n, d)]
            if op == "widening_sub":
                n = narrow(t, rng.random() < 0.5)
                return ["fp", op, self.expr(n, d), self.expr(n, d)]
            if not s:
                n = narrow(t)
                return ["fp", op, self.expr(n, d), self.expr(n, d)]
            n1 = narrow(t, rng.random() < 0.6)
            n2 = narrow(t, True) if not signed(n1) else narrow(t, rng.random() < 0.7)
            return ["fp", op, self.expr(n1, d), self.expr(n2, d)]
        if k == "absd":
            if s:
                return None
            ot = mk(rng.random() < 0.5, b)
            return ["fp", "absd", self.expr(ot, d), self.expr(ot, d)]
        if k == "abs":
            if s:
                return None
            return ["abs", self.expr(mk(True, b), d)]
        if k == "msr":
            if b > 32:
                return None
            return ["msr", rng.random() < 0.5, self.expr(t, d), self.expr(t, d), rng.randrange(0, 2 * b)]
        if k == "shift":
            op = rng.choice(["shl", "shr", "shr", "rshr", "rshl", "wshl"])
            if op == "wshl":
                if b < 16:
                    return None
                t2 = narrow(t)
            else:
                t2 = t
            b2 = bits(t2)
            how = rng.random()
            if how < 0.5:
                amt = ["c", mk(False, b2), rng.randrange(0, b2)]
            elif how < 0.75 and [p for p in self.prog["params"] if bits(p["type"]) == b2]:
                amt = ["p", rng.choice([p for p in self.prog["params"] if bits(p["type"]) == b2])["name"]]
            else:
                amt = self.expr(mk(rng.random() < 0.3, b2), max(1, d - 2))
            return ["shift", op, self.expr(t2, d), amt]
        if k == "sel":
            ct = rng.choice(STAGE_TYPES)
            return ["sel", rng.choice(["lt", "le", "eq", "ne", "gt", "ge"]), self.expr(ct, d - 1),
                    self.expr(ct, d - 1), self.expr(t, d), self.expr(t, d)]
        if k in ("cast", "satcast"):
            src = rng.choice(TYPES if rng.random() < 0.15 else STAGE_TYPES)
            if src == t:
                return None
            return [k, t, self.expr(src, d)]
        if k == "divc":
            lo, hi = trange(t)
            cs = [2, 3, 4, 5, 7, 8, 9, 10, 15, 16, 17, 100, 255, 256, 1000, 65535]
            c = rng.choice([c for c in cs if c <= hi])
            if s and rng.random() < 0.3:
                c = -c
            return [rng.choice(["divc", "divc", "modc"]), t, self.expr(t, d), c]
        return None


def random_program(rng, max_depth=6):
    """One random program (not yet checked by Halide)."""
    prog = {"inputs": [], "weights": [], "params": [], "stages": [], "_ranges": {}}
    for i in range(rng.choice([1, 1, 2, 2, 3])):
        prog["inputs"].append({"name": "in%d" % i, "type": rng.choice(STAGE_TYPES)})
    for i in range(rng.choice([0, 1, 2])):
        t = rng.choice(STAGE_TYPES)
        lo, hi = trange(t)
        v = rng.choice([rng.randint(0, bits(t) - 1), rng.randint(max(lo, -1000), min(hi, 1000)), lo, hi])
        prog["params"].append({"name": "p%d" % i, "type": t, "value": v})
    nstages = rng.choice([1, 1, 1, 2, 2, 3])
    for i in range(nstages):
        t = rng.choice(STAGE_TYPES)
        g = Gen(rng, prog, i)
        if rng.random() < 0.25:
            op = rng.choice(["sum", "sum", "satsum", "max", "min", "dot"])
            k = rng.choice([2, 3, 4, 5, 8, 9, 16])
            st = {"type": t, "reduce": op, "axis": rng.choice([0, 0, 1]), "extent": k}
            if op == "dot":
                wt = rng.choice([w for w in STAGE_TYPES if bits(w) <= bits(t)])
                name = "w%d" % len(prog["weights"])
                prog["weights"].append({"name": name, "type": wt, "extent": k})
                st["weight"] = name
            st["init"] = ["c", t, 0] if rng.random() < 0.6 else g.expr(t, 2)
            g.body = True
            st["body"] = g.expr(t, rng.randint(1, max_depth - 1))
            g.body = False
        else:
            st = {"type": t, "expr": g.expr(t, rng.randint(2, max_depth))}
        prog["stages"].append(st)
        try:
            prog["_ranges"] = check({**prog, "stages": prog["stages"]})
        except Invalid:
            # A reduction that may overflow: make it saturating or a max.
            if "reduce" in st:
                st["reduce"] = "satsum" if st["reduce"] != "dot" else "max"
                st.pop("weight", None)
            prog["_ranges"] = check(prog)
    del prog["_ranges"]
    prog["W"] = rng.choice([rng.randint(1, 40), rng.randint(40, 300), rng.choice([64, 128, 256, 192])])
    prog["H"] = rng.choice([1, 2, 3, 4, 5, 8])
    prog["schedule"] = random_schedule(rng, prog)
    # Weights only for dot reductions that survived.
    used = {s.get("weight") for s in prog["stages"]}
    prog["weights"] = [w for w in prog["weights"] if w["name"] in used or weight_read(prog, w["name"])]
    return prog


def weight_read(prog, name):
    found = []

    def walk(e):
        if isinstance(e, list):
            if e and e[0] == "wt" and e[1] == name:
                found.append(1)
            for x in e[1:]:
                walk(x)
    for s in prog["stages"]:
        for k in ("expr", "init", "body"):
            if k in s:
                walk(s[k])
    return bool(found)


def random_schedule(rng, prog):
    out = {}
    if rng.random() < 0.85:
        out["vector"] = rng.choice(VECTORS)
        out["tail"] = rng.choice(TAILS)
        if rng.random() < 0.25:
            out["unroll"] = rng.choice([2, 3, 4])
        # ShiftInwards needs a loop at least one vector long.
        if out["vector"] * out.get("unroll", 1) > prog["W"] and out["tail"] != "guard":
            out["tail"] = "guard"
    if rng.random() < 0.3:
        out["split_y"] = rng.choice([2, 3, 4])
        out["unroll_y"] = rng.random() < 0.5
    if rng.random() < 0.2:
        out["parallel"] = True
    stages = []
    for s in prog["stages"][:-1]:
        st = {}
        where = rng.choice(["inline", "root", "root", "at_y", "at_x"])
        if "reduce" in s and where == "inline":
            where = "root"
        st["at"] = where
        if where != "inline" and rng.random() < 0.7:
            st["vector"] = rng.choice(VECTORS)
            st["tail"] = rng.choice(TAILS + ["round"])
        if "reduce" in s and rng.random() < 0.6:
            st["update_vector"] = rng.choice(VECTORS)
        stages.append(st)
    if "reduce" in prog["stages"][-1] and rng.random() < 0.6:
        out["update_vector"] = rng.choice(VECTORS)
    return {"out": out, "stages": stages}


def program(seed, index, attempt=0):
    """Pipeline `index` of the suite of `seed` (attempt k: a derived seed,
    after Halide refused attempt k-1). The same on every machine: the
    generator is seeded with a string, which Python hashes with SHA-512."""
    rng = random.Random("misaal-random/%d/%d/%d" % (seed, index, attempt))
    return random_program(rng)
