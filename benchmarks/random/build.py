"""A program (programs.py) as a Halide pipeline: build(prog) returns the
dict of kernels/_common.py's Spec.finish, which generate.py's
compile_kernel turns into Stmt, object and manifest entry."""

import json
import os
import sys

import halide as hl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernels"))
from _common import Spec  # noqa: E402

from programs import bits, signed  # noqa: E402

# Inputs are read beyond the output's window by stencil taps and RDoms
# (the program's reach) and by the stages' vector tails: RoundUp widens a
# region to whole vectors on the right, ShiftInwards moves a vector left of
# a region shorter than it. Each stage may add up to one 128-lane vector
# (or a split of y) on either side, so inputs start at -PAD per stage.
PAD_X, PAD_Y = 128, 4

TAILS = {"auto": hl.TailStrategy.Auto, "guard": hl.TailStrategy.GuardWithIf,
         "shift": hl.TailStrategy.ShiftInwards, "round": hl.TailStrategy.RoundUp}


def htype(t):
    return hl.Int(bits(t)) if signed(t) else hl.UInt(bits(t))


def reach(prog):
    """Per stage, {input: (rx, ry)}: how far past (x, y) it reads each input."""
    out = []
    for s in prog["stages"]:
        r = {}
        k = s.get("extent", 1) - 1
        axis = s.get("axis", 0)

        def bump(name, dx, dy):
            ox, oy = r.get(name, (0, 0))
            r[name] = (max(ox, dx), max(oy, dy))

        def walk(e):
            if not isinstance(e, list) or not e:
                return
            if e[0] in ("in", "f"):
                dx = e[2] + (k if e[4] and axis == 0 else 0)
                dy = e[3] + (k if e[4] and axis == 1 else 0)
                if e[0] == "in":
                    bump(e[1], dx, dy)
                else:
                    for name, (rx, ry) in out[e[1]].items():
                        bump(name, rx + dx, ry + dy)
                return
            for x in e[1:]:
                walk(x)
        for key in ("expr", "init", "body"):
            if key in s:
                walk(s[key])
        out.append(r)
    return out


def reads_weight(stage, name):
    """Whether a reduction stage reads weight `name` (a dot product's own
    weight, or a ["wt", name] leaf in its body)."""
    return stage.get("weight") == name or ('["wt", "%s"]' % name) in json.dumps(stage["body"])


class Builder:
    def __init__(self, prog):
        self.prog = prog
        self.spec = Spec()
        self.x, self.y = hl.Var("x"), hl.Var("y")
        self.r = None
        self.axis = 0
        self.funcs = []
        n = len(prog["stages"])
        pad_x = PAD_X * n
        rch = reach(prog)[-1]
        self.inputs = {}
        self.mins = {}
        for i in prog["inputs"]:
            rx, ry = rch.get(i["name"], (0, 0))
            name = i["name"]
            p = self.spec.buffer(htype(i["type"]), name, [prog["W"] + rx + 2 * pad_x, prog["H"] + ry + 2 * PAD_Y * n])
            self.mins[name] = [-pad_x, -PAD_Y * n]
            for d, m in enumerate(self.mins[name]):
                p.dim(d).set_min(m)
            self.inputs[name] = p
        self.weights = {}
        for w in prog.get("weights", []):
            # Indexed by the RDom of every reduction whose body reads it.
            k = max([w["extent"]] + [s["extent"] for s in prog["stages"] if "reduce" in s and reads_weight(s, w["name"])])
            self.weights[w["name"]] = self.spec.buffer(htype(w["type"]), w["name"], [k])
        self.params = {}
        for p in prog.get("params", []):
            self.params[p["name"]] = self.spec.scalar(htype(p["type"]), p["name"], p["value"])

    def coords(self, e):
        dx, dy = self.x + e[2], self.y + e[3]
        if e[4]:
            if self.axis == 0:
                dx = dx + self.r.x
            else:
                dy = dy + self.r.x
        return dx, dy

    def const(self, t, v):
        return hl.cast(htype(t), hl.Expr(v)) if -(1 << 63) <= v < (1 << 63) else hl.cast(htype(t), hl.Expr(v - (1 << 64)))

    def amount(self, a, t):
        """A shift amount, masked to [0, bits of t)."""
        b = bits(t)
        if a[0] == "c":
            return self.const("u%d" % b, a[2])
        e = self.expr(a)
        et = e.type()
        masked = hl.cast(hl.UInt(b), e) & hl.cast(hl.UInt(b), hl.Expr(b - 1))
        return hl.cast(et, masked) if et.is_int() else masked

    def expr(self, e):
        k = e[0]
        if k == "in":
            return self.inputs[e[1]][self.coords(e)]
        if k == "f":
            # A FuncRef; a cast to its own type is the load itself.
            return hl.cast(htype(self.prog["stages"][e[1]]["type"]), self.funcs[e[1]][self.coords(e)])
        if k == "wt":
            return self.weights[e[1]][self.r.x]
        if k == "p":
            return self.params[e[1]]
        if k == "c":
            return self.const(e[1], e[2])
        if k == "cast":
            return hl.cast(htype(e[1]), self.expr(e[2]))
        if k == "satcast":
            return hl.saturating_cast(htype(e[1]), self.expr(e[2]))
        if k == "bin":
            a, b = self.expr(e[2]), self.expr(e[3])
            return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
                    "min": lambda: hl.min(a, b), "max": lambda: hl.max(a, b),
                    "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b}[e[1]]()
        if k == "divc":
            return self.expr(e[2]) / self.const(e[1], e[3])
        if k == "modc":
            return self.expr(e[2]) % self.const(e[1], e[3])
        if k == "fp":
            return getattr(hl, e[1])(self.expr(e[2]), self.expr(e[3]))
        if k == "msr":
            a, b = self.expr(e[2]), self.expr(e[3])
            q = hl.cast(hl.UInt(a.type().bits()), hl.Expr(e[4]))
            return (hl.rounding_mul_shift_right if e[1] else hl.mul_shift_right)(a, b, q)
        if k == "shift":
            a = self.expr(e[2])
            n = self.amount(e[3], "u%d" % a.type().bits())
            return {"shl": lambda: a << n, "shr": lambda: a >> n,
                    "rshr": lambda: hl.rounding_shift_right(a, n),
                    "rshl": lambda: hl.rounding_shift_left(a, n),
                    "wshl": lambda: hl.widening_shift_left(a, n)}[e[1]]()
        if k == "sel":
            c1, c2 = self.expr(e[2]), self.expr(e[3])
            cond = {"lt": lambda: c1 < c2, "le": lambda: c1 <= c2, "eq": lambda: c1 == c2,
                    "ne": lambda: c1 != c2, "gt": lambda: c1 > c2, "ge": lambda: c1 >= c2}[e[1]]()
            return hl.select(cond, self.expr(e[4]), self.expr(e[5]))
        if k == "abs":
            return hl.abs(self.expr(e[1]))
        raise ValueError("unknown node %r" % (k,))

    def typed(self, e, t):
        """e as Halide, which must have type t (programs.typed's claim)."""
        h = self.expr(e)
        if h.type() != t:
            raise TypeError("%r is %s in Halide, not %s" % (e, h.type(), t))
        return h

    def stage(self, i, s, name):
        f = hl.Func(name)
        x, y = self.x, self.y
        t = htype(s["type"])
        if "reduce" not in s:
            f[x, y] = self.typed(s["expr"], t)
            return f
        f[x, y] = self.typed(s["init"], t)
        self.r, self.axis = hl.RDom([(0, s["extent"])], "r%d" % i), s.get("axis", 0)
        body = self.typed(s["body"], t)
        op = s["reduce"]
        if op == "sum":
            f[x, y] = f[x, y] + body
        elif op == "dot":
            f[x, y] = f[x, y] + body * hl.cast(t, self.weights[s["weight"]][self.r.x])
        elif op == "satsum":
            f[x, y] = hl.saturating_add(f[x, y], body)
        elif op == "max":
            f[x, y] = hl.max(f[x, y], body)
        elif op == "min":
            f[x, y] = hl.min(f[x, y], body)
        self.r = None
        return f

    def build(self):
        stages = self.prog["stages"]
        for i, s in enumerate(stages):
            self.funcs.append(self.stage(i, s, "output" if i + 1 == len(stages) else "s%d" % i))
        self.schedule()
        kernel = self.spec.finish(self.funcs[-1], [self.prog["W"], self.prog["H"]])
        kernel["mins"] = dict(self.mins)
        return kernel

    def schedule(self):
        sch = self.prog["schedule"]
        out, o = self.funcs[-1], sch["out"]
        x, y = self.x, self.y
        xv, yv = x, y
        if "vector" in o:
            xo, xi = hl.Var("xo"), hl.Var("xi")
            out.split(x, xo, xi, o["vector"], TAILS[o["tail"]]).vectorize(xi)
            xv = xo
            if o.get("unroll"):
                xu = hl.Var("xu")
                out.split(xo, xo, xu, o["unroll"], hl.TailStrategy.GuardWithIf).unroll(xu)
        if o.get("split_y"):
            yo, yi = hl.Var("yo"), hl.Var("yi")
            tail = hl.TailStrategy.Auto if self.prog["H"] >= o["split_y"] else hl.TailStrategy.GuardWithIf
            out.split(y, yo, yi, o["split_y"], tail)
            if o.get("unroll_y"):
                out.unroll(yi)
            yv = yo
        if o.get("parallel"):
            out.parallel(yv)
        if o.get("update_vector") and "reduce" in self.prog["stages"][-1]:
            # RoundUp (the update default) would write past the output.
            out.update().vectorize(x, o["update_vector"], hl.TailStrategy.GuardWithIf)
        for f, s, st in zip(self.funcs, self.prog["stages"], sch["stages"]):
            at = st["at"]
            if at == "root":
                f.compute_root()
            elif at == "at_y":
                f.compute_at(out, yv)
            elif at == "at_x":
                f.compute_at(out, xv)
            if at != "inline" and "vector" in st:
                f.vectorize(x, st["vector"], TAILS[st["tail"]])
            if at != "inline" and st.get("update_vector") and "reduce" in s:
                f.update().vectorize(x, st["update_vector"])


def build(prog):
    return Builder(prog).build()
