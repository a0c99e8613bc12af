//! Which rule instances can ever match a kernel's e-graph, decided before
//! their verdicts are settled and before egglog compiles them: an
//! instance left out costs nothing, and parsing, type-checking and
//! searching the rest is a third of a compile.
//!
//! The analysis over-approximates what saturation can put in the e-graph,
//! so leaving out what it rejects changes no selection:
//!
//! - **Facts.** Every node the kernel inserts, and every node the right
//!   side of a kept instance writes, is a [`Shape`]: its [`Atom`] (op with
//!   generics, instruction, constant or leaf), its children's atoms and its
//!   grandchildren's. A pattern variable is "anything".
//! - **Merges.** A kept rewrite puts its right side's root in the class of
//!   its left side's root, so the two root atoms may share a class from
//!   then on: a union-find over atoms records it. A rewrite to one of its
//!   variables (`cast` to the same width is its operand) joins the left
//!   root's atom with every atom a kernel or rule puts under it there.
//! - **Matching.** A left side can match when each of its nodes has a fact
//!   with the same atom whose children's atoms may share a class with the
//!   pattern's (the union-find decides) and, where the child's atom never
//!   shares a class with another atom (so the child's class holds that one
//!   node), whose grandchildren's atoms may too.
//!
//! The grandchildren are what make it selective: a shift rule is
//! instantiated per constant amount, and `rounding_shift_right(x,
//! broadcast(c))` expands to a shift by `broadcast(c - 1)`. Atoms alone (or
//! atoms with their children) would call every amount from 31 down
//! matchable once one is, since a `broadcast` of some leaf sits under
//! every such shift; a `broadcast` of the constant `c` under one does not.

use super::encode::{Op, TermDag};
use super::rules::Pat;
use std::collections::{BTreeSet, HashMap};

/// A node's label without its children.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    Const(i64, i64),
    Halide(String, Vec<i64>),
    Instr(String),
    /// A value the selector does not look into (all leaves alike).
    Leaf,
    /// A grandchild that is not a constant: only constants are told apart
    /// that deep (a shift amount), which keeps the facts few.
    Other,
}

/// A grandchild's atom as facts and patterns keep it.
fn grand(a: Option<Atom>) -> Option<Atom> {
    a.map(|a| if matches!(a, Atom::Const(..)) { a } else { Atom::Other })
}

/// A child of a [`Shape`]: its atom and its own children's atoms (`None`:
/// anything, a pattern variable).
pub type Kid = Option<(Atom, Vec<Option<Atom>>)>;

/// A node as far as matching looks: its atom, its children's and its
/// grandchildren's.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shape {
    pub atom: Atom,
    pub kids: Vec<Kid>,
}

fn atom_of(p: &Pat) -> Option<Atom> {
    match p {
        Pat::Var(_) => None,
        Pat::Const { bits, value } => Some(Atom::Const(*bits, *value)),
        Pat::Halide { name, generics, .. } => Some(Atom::Halide(name.clone(), generics.clone())),
        Pat::Instr { name, .. } => Some(Atom::Instr(name.clone())),
    }
}

fn kids_of(p: &Pat) -> &[Pat] {
    match p {
        Pat::Halide { kids, .. } | Pat::Instr { kids, .. } => kids,
        _ => &[],
    }
}

/// The shape of the node `p` (not a variable).
fn shape_of(p: &Pat) -> Option<Shape> {
    let atom = atom_of(p)?;
    let kids = kids_of(p).iter().map(|k| atom_of(k).map(|a| (a, kids_of(k).iter().map(|g| grand(atom_of(g))).collect()))).collect();
    Some(Shape { atom, kids })
}

/// Every node of `p` (variables aside), as shapes.
pub fn shapes(p: &Pat) -> Vec<Shape> {
    let mut out = Vec::new();
    p.walk(&mut |n| out.extend(shape_of(n)));
    out
}

fn atom_of_op(op: &Op) -> Atom {
    match op {
        Op::Halide { name, generics } => Atom::Halide(name.clone(), generics.clone()),
        Op::Instr { name } => Atom::Instr(name.clone()),
        Op::Leaf { .. } => Atom::Leaf,
        Op::Const { bits, value } => Atom::Const(*bits, *value),
    }
}

/// The shapes of the nodes a kernel inserts.
pub fn kernel_shapes(dag: &TermDag) -> Vec<Shape> {
    let atom = |k: usize| atom_of_op(&dag.nodes[k].op);
    let mut out: Vec<Shape> = dag.nodes.iter().map(|n| Shape { atom: atom_of_op(&n.op), kids: n.kids.iter().map(|&k| Some((atom(k), dag.nodes[k].kids.iter().map(|&g| grand(Some(atom(g)))).collect()))).collect() }).collect();
    out.sort();
    out.dedup();
    out
}

/// An [`Atom`] as one [`matchable`] call numbers it: its rank among every
/// atom the call can meet (the kernel's and the sides'), so ids compare as
/// their atoms do and every set of them iterates in the same order. Facts
/// and classes then copy and compare integers, not op names.
type Id = u32;

/// A [`Kid`] of [`Id`]s.
type IKid = Option<(Id, Vec<Option<Id>>)>;

/// A [`Shape`] of [`Id`]s.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct IShape {
    atom: Id,
    kids: Vec<IKid>,
}

/// A rule side of [`Id`]s: a variable, or a node (an atom and its children).
#[derive(PartialEq)]
enum IPat<'p> {
    Var(&'p str),
    Node(Id, Vec<IPat<'p>>),
}

impl IPat<'_> {
    fn atom(&self) -> Option<Id> {
        match self {
            IPat::Var(_) => None,
            IPat::Node(a, _) => Some(*a),
        }
    }
    fn kids(&self) -> &[Self] {
        match self {
            IPat::Node(_, kids) => kids,
            IPat::Var(_) => &[],
        }
    }
    /// Every node, variables included, parents first.
    fn walk<'s>(&'s self, f: &mut dyn FnMut(&'s Self)) {
        f(self);
        self.kids().iter().for_each(|k| k.walk(f));
    }
}

/// An atom borrowed from a pattern or a kernel shape, ordered as [`Atom`]
/// is (the same variants in the same order, `&str` and `&[i64]` as `String`
/// and `Vec<i64>`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum AtomRef<'a> {
    Const(i64, i64),
    Halide(&'a str, &'a [i64]),
    Instr(&'a str),
    Leaf,
    Other,
}

fn atom_ref(a: &Atom) -> AtomRef<'_> {
    match a {
        Atom::Const(b, v) => AtomRef::Const(*b, *v),
        Atom::Halide(n, g) => AtomRef::Halide(n, g),
        Atom::Instr(n) => AtomRef::Instr(n),
        Atom::Leaf => AtomRef::Leaf,
        Atom::Other => AtomRef::Other,
    }
}

fn pat_atom_ref(p: &Pat) -> Option<AtomRef<'_>> {
    match p {
        Pat::Var(_) => None,
        Pat::Const { bits, value } => Some(AtomRef::Const(*bits, *value)),
        Pat::Halide { name, generics, .. } => Some(AtomRef::Halide(name, generics)),
        Pat::Instr { name, .. } => Some(AtomRef::Instr(name)),
    }
}

/// The atoms of one call, sorted: an atom's [`Id`] is its position.
struct Atoms<'a> {
    sorted: Vec<AtomRef<'a>>,
    /// `Other`'s id: what [`grand`] makes of an atom that is not a constant.
    other: Id,
}

impl<'a> Atoms<'a> {
    fn new(mut all: Vec<AtomRef<'a>>) -> Self {
        all.push(AtomRef::Other);
        all.sort_unstable();
        all.dedup();
        let other = all.binary_search(&AtomRef::Other).expect("pushed") as Id;
        Atoms { sorted: all, other }
    }
    fn id(&self, a: AtomRef) -> Id {
        self.sorted.binary_search(&a).expect("every atom of the call is collected") as Id
    }
    fn is_const(&self, a: Id) -> bool {
        matches!(self.sorted[a as usize], AtomRef::Const(..))
    }
    fn is_broadcast(&self, a: Id) -> bool {
        matches!(self.sorted[a as usize], AtomRef::Halide("broadcast", _))
    }
    /// A broadcast's element width (its generics are sign, width, lanes).
    fn broadcast_width(&self, a: Id) -> i64 {
        match self.sorted[a as usize] {
            AtomRef::Halide(_, [_, bw, _]) => *bw,
            _ => 64,
        }
    }
    /// Whether constants `a` and `b` differ in their low `bits` bits (no
    /// answer, false, for anything but two constants).
    fn different_constants(&self, a: Id, b: Id, bits: i64) -> bool {
        match (self.sorted[a as usize], self.sorted[b as usize]) {
            (AtomRef::Const(wa, va), AtomRef::Const(wb, vb)) => {
                let bits = bits.min(wa).min(wb);
                let mask = if (1..64).contains(&bits) { (1i64 << bits) - 1 } else { -1 };
                (va ^ vb) & mask != 0
            }
            _ => false,
        }
    }
    /// [`grand`] of ids.
    fn grand(&self, a: Option<Id>) -> Option<Id> {
        a.map(|a| if self.is_const(a) { a } else { self.other })
    }
    fn pat<'p>(&self, p: &'p Pat) -> IPat<'p> {
        match p {
            Pat::Var(v) => IPat::Var(v),
            _ => IPat::Node(self.id(pat_atom_ref(p).expect("a node")), kids_of(p).iter().map(|k| self.pat(k)).collect()),
        }
    }
    fn shape(&self, s: &Shape) -> IShape {
        let kids = s.kids.iter().map(|k| k.as_ref().map(|(a, g)| (self.id(atom_ref(a)), g.iter().map(|g| g.as_ref().map(|g| self.id(atom_ref(g)))).collect()))).collect();
        IShape { atom: self.id(atom_ref(&s.atom)), kids }
    }
}

/// The shape of the node `p` (not a variable).
fn ishape_of(atoms: &Atoms, p: &IPat) -> Option<IShape> {
    let atom = p.atom()?;
    let kids = p.kids().iter().map(|k| k.atom().map(|a| (a, k.kids().iter().map(|g| atoms.grand(g.atom())).collect()))).collect();
    Some(IShape { atom, kids })
}

/// Every node of `p` (variables aside), as shapes.
fn ishapes(atoms: &Atoms, p: &IPat) -> Vec<IShape> {
    let mut out = Vec::new();
    p.walk(&mut |n| out.extend(ishape_of(atoms, n)));
    out
}

/// Which atoms may share an e-class. Element 0 is "anything": an atom
/// joined with it may share a class with every atom. Atom `a` is element
/// `a + 1`.
struct Classes {
    parent: Vec<usize>,
    /// Members per root, to tell an atom that never joined another.
    size: Vec<usize>,
    /// Atoms a rewrite joins with themselves (`shr` to `shr` of a `shr`):
    /// one class may hold two of their nodes.
    crowded: BTreeSet<usize>,
    /// Per root: whether the set holds an atom that is not a constant.
    nonconst: Vec<bool>,
}

const ANY: usize = 0;

impl Classes {
    fn new(atoms: &Atoms) -> Self {
        let n = atoms.sorted.len() + 1;
        let nonconst = std::iter::once(true).chain((0..atoms.sorted.len()).map(|a| !atoms.is_const(a as Id))).collect();
        Classes { parent: (0..n).collect(), size: vec![1; n], crowded: BTreeSet::new(), nonconst }
    }
    fn id(&self, a: Id) -> usize {
        a as usize + 1
    }
    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }
    /// Whether this joined two sets (or first joined an atom with itself).
    fn union(&mut self, a: usize, b: usize) -> bool {
        if a == b {
            return self.crowded.insert(a);
        }
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        // "Anything" stays its set's root.
        let (root, child) = if a == ANY || (b != ANY && self.size[a] >= self.size[b]) { (a, b) } else { (b, a) };
        self.parent[child] = root;
        self.size[root] += self.size[child];
        self.nonconst[root] |= self.nonconst[child];
        true
    }
    /// Whether a class holding a node of atom `have` may hold one of `want`.
    fn may_share(&mut self, have: Id, want: Id) -> bool {
        if have == want {
            return true;
        }
        let (h, w) = (self.id(have), self.id(want));
        let (h, w) = (self.find(h), self.find(w));
        h == w || h == self.find(ANY) || w == self.find(ANY)
    }
    /// [`may_share`](Self::may_share) for grandchildren, where `other` (the
    /// id of `Other`) is any atom but a constant.
    fn may_share_grand(&mut self, have: Id, want: Id, other: Id) -> bool {
        if have == other && want == other {
            true
        } else if have == other || want == other {
            let c = if have == other { want } else { have };
            let i = self.id(c);
            let r = self.find(i);
            self.nonconst[r]
        } else {
            self.may_share(have, want)
        }
    }
    /// Whether the class of a node of atom `a` holds that node alone.
    fn alone(&mut self, a: Id) -> bool {
        let i = self.id(a);
        let r = self.find(i);
        r != self.find(ANY) && self.size[r] == 1 && !self.crowded.contains(&i)
    }
}

/// The facts: shapes by atom.
struct Facts {
    by_atom: Vec<BTreeSet<IShape>>,
}

impl Facts {
    fn add(&mut self, s: IShape) -> bool {
        self.by_atom[s.atom as usize].insert(s)
    }
    fn of(&self, a: Id) -> &BTreeSet<IShape> {
        &self.by_atom[a as usize]
    }
}

fn kid_matches(classes: &mut Classes, atoms: &Atoms, have: &IKid, want: &IKid) -> bool {
    let other = atoms.other;
    let (Some((want_atom, want_kids)), Some((have_atom, have_kids))) = (want, have) else { return true };
    if !classes.may_share(*have_atom, *want_atom) {
        return false;
    }
    // A broadcast's value is its constant: every rule is proved, so a class
    // holding `broadcast(c)` holds no `broadcast(d)` for another d, whatever
    // else joins it (a divisor or shift amount is told apart even under a
    // class that is not alone).
    if have_atom == want_atom
        && atoms.is_broadcast(*have_atom)
        && let ([Some(h)], [Some(w)]) = (have_kids.as_slice(), want_kids.as_slice())
        && atoms.different_constants(*h, *w, atoms.broadcast_width(*have_atom))
    {
        return false;
    }
    // The child's class holds this node alone: its children are what the
    // fact says, up to their own classes.
    if have_atom == want_atom && classes.alone(*have_atom) {
        return have_kids.iter().zip(want_kids).all(|(h, w)| match (h, w) {
            (Some(h), Some(w)) => classes.may_share_grand(*h, *w, other),
            _ => true,
        });
    }
    true
}

/// Whether every node of `side` has a fact to match.
fn can_match(side: &[IShape], facts: &Facts, classes: &mut Classes, atoms: &Atoms) -> bool {
    side.iter().all(|want| facts.of(want.atom).iter().any(|h| h.kids.len() == want.kids.len() && h.kids.iter().zip(&want.kids).all(|(hk, wk)| kid_matches(classes, atoms, hk, wk))))
}

/// The most facts one written node expands to; past it a variable's slot
/// is "anything".
const MAX_EXPANSION: usize = 256;

/// Every choice of one option per slot. Past [`MAX_EXPANSION`] choices, a
/// slot with several options becomes the one option "anything" (`None`).
fn combinations<T: Clone>(slots: Vec<Vec<Option<T>>>) -> Vec<Vec<Option<T>>> {
    let n: usize = slots.iter().map(|s| s.len()).product();
    let slots: Vec<Vec<Option<T>>> = if n > MAX_EXPANSION { slots.into_iter().map(|s| if s.len() > 1 { vec![None] } else { s }).collect() } else { slots };
    slots.into_iter().fold(vec![vec![]], |acc, s| acc.iter().flat_map(|p| s.iter().map(move |x| [p.clone(), vec![x.clone()]].concat())).collect())
}

/// The shapes firing `from -> to` writes: `to`'s nodes, each variable
/// replaced by what it can be bound to, the children found at its place
/// in `from` among the facts (a variable at `from`'s root: anything).
fn written(atoms: &Atoms, from: &IPat, to: &IPat, facts: &Facts) -> Vec<IShape> {
    let mut bound: HashMap<&str, BTreeSet<IKid>> = HashMap::new();
    if let IPat::Var(v) = from {
        bound.entry(v).or_default().insert(None);
    }
    from.walk(&mut |n| {
        let Some(atom) = n.atom() else { return };
        for (j, k) in n.kids().iter().enumerate() {
            if let IPat::Var(v) = k {
                let found = facts.of(atom).iter().filter_map(|f| f.kids.get(j).cloned());
                bound.entry(v).or_default().extend(found);
            }
        }
    });
    // A variable bound to anything at one of its places is anything.
    let options = |v: &str| -> Vec<IKid> {
        match bound.get(v) {
            Some(b) if !b.contains(&None) && !b.is_empty() && b.len() <= MAX_EXPANSION => b.iter().cloned().collect(),
            _ => vec![None],
        }
    };
    let mut out = Vec::new();
    let mut todo = Vec::new();
    to.walk(&mut |n| {
        if n.atom().is_some() {
            todo.push(n);
        }
    });
    for q in todo {
        let atom = q.atom().expect("a node");
        // Each slot's possible children, each with its possible children.
        let slots: Vec<Vec<IKid>> = q
            .kids()
            .iter()
            .map(|k| match k {
                IPat::Var(v) => options(v),
                IPat::Node(a, kids) => {
                    let grand: Vec<Vec<Option<Id>>> = kids
                        .iter()
                        .map(|g| match g {
                            IPat::Var(w) => {
                                let mut ids: Vec<Option<Id>> = options(w).into_iter().map(|o| atoms.grand(o.map(|(x, _)| x))).collect();
                                ids.dedup();
                                ids
                            }
                            _ => vec![atoms.grand(g.atom())],
                        })
                        .collect();
                    combinations(grand).into_iter().map(|gs| Some((*a, gs))).collect()
                }
            })
            .collect();
        let combos = combinations(slots);
        out.extend(combos.into_iter().map(|kids| IShape { atom, kids }));
    }
    out
}
/// What firing a kept rewrite `from -> to` may merge.
enum Merge {
    /// Two root atoms.
    Atoms(Id, Id),
    /// `from`'s root with whatever is its child `kid` (a rewrite to a variable).
    Child(Id, usize),
    /// `to`'s root (or nothing) with anything: a left side that is a
    /// variable, or a variable deeper than a child.
    Anything(Option<Id>),
}

fn merge_of(from: &IPat, to: &IPat) -> Merge {
    match (from.atom(), to.atom()) {
        (Some(a), Some(b)) => Merge::Atoms(a, b),
        (None, b) => Merge::Anything(b),
        (Some(a), None) => match from.kids().iter().position(|k| k == to) {
            Some(j) => Merge::Child(a, j),
            None => Merge::Anything(Some(a)),
        },
    }
}

/// The atoms of `p`'s nodes that have a variable child: what its
/// variables are bound under, so what [`written`] reads.
fn binding_atoms(p: &IPat, out: &mut BTreeSet<Id>) {
    p.walk(&mut |n| {
        if let Some(a) = n.atom()
            && n.kids().iter().any(|k| matches!(k, IPat::Var(_)))
        {
            out.insert(a);
        }
    });
}

/// The atoms of `p`'s nodes.
fn atoms_of(p: &IPat, out: &mut BTreeSet<Id>) {
    p.walk(&mut |n| out.extend(n.atom()));
}

/// Which of the instances `sides` (left, right, two-way) can ever match,
/// given the shapes of the kernel's nodes. A two-way rule also matches its
/// right side and writes its left one.
///
/// Rounds until nothing changes. Work is redone only where it can change:
/// a left side is tried again when a fact about one of its atoms is new or
/// two classes joined, and what a kept rewrite writes is worked out again
/// when a fact about one of its binding side's atoms is new.
pub fn matchable(sides: &[(&Pat, &Pat, bool)], kernel: impl IntoIterator<Item = Shape>) -> Vec<bool> {
    let kernel: Vec<Shape> = kernel.into_iter().collect();
    // Every atom the call can meet: the kernel's, the sides' (what
    // `written` makes facts of), and `Other`.
    let mut all: Vec<AtomRef> = Vec::new();
    for s in &kernel {
        all.push(atom_ref(&s.atom));
        for (a, g) in s.kids.iter().flatten() {
            all.push(atom_ref(a));
            all.extend(g.iter().flatten().map(atom_ref));
        }
    }
    for (l, r, _) in sides {
        l.walk(&mut |n| all.extend(pat_atom_ref(n)));
        r.walk(&mut |n| all.extend(pat_atom_ref(n)));
    }
    let atoms = Atoms::new(all);
    let mut facts = Facts { by_atom: vec![BTreeSet::new(); atoms.sorted.len()] };
    let mut dirty = vec![false; atoms.sorted.len()];
    for s in &kernel {
        let s = atoms.shape(s);
        dirty[s.atom as usize] = true;
        facts.add(s);
    }
    let mut classes = Classes::new(&atoms);
    let pats: Vec<(IPat, IPat)> = sides.iter().map(|(l, r, _)| (atoms.pat(l), atoms.pat(r))).collect();
    let shaped: Vec<(Vec<IShape>, Vec<IShape>)> = pats.iter().map(|(l, r)| (ishapes(&atoms, l), ishapes(&atoms, r))).collect();
    // The atoms a side's match, and what the rewrite writes, depend on.
    // Per instance, `collect` over its left side (and its right side too
    // where the rule runs both ways), sorted.
    let per_side = |collect: fn(&IPat, &mut BTreeSet<Id>)| -> Vec<Vec<Id>> {
        pats.iter()
            .zip(sides)
            .map(|((l, r), &(_, _, two_way))| {
                let mut s = BTreeSet::new();
                collect(l, &mut s);
                if two_way {
                    collect(r, &mut s);
                }
                s.into_iter().collect()
            })
            .collect()
    };
    let needs = per_side(atoms_of);
    let binds = per_side(binding_atoms);
    let mut keep = vec![false; sides.len()];
    let mut merges: Vec<Merge> = Vec::new();
    let mut joined = true;
    loop {
        let mut kept_now = vec![false; sides.len()];
        for (k, (l, r)) in shaped.iter().enumerate() {
            let two_way = sides[k].2;
            if keep[k] || !(joined || needs[k].iter().any(|&a| dirty[a as usize])) {
                continue;
            }
            if !(can_match(l, &facts, &mut classes, &atoms) || (two_way && can_match(r, &facts, &mut classes, &atoms))) {
                continue;
            }
            keep[k] = true;
            kept_now[k] = true;
            let (lhs, rhs) = &pats[k];
            merges.push(merge_of(lhs, rhs));
            if two_way {
                merges.push(merge_of(rhs, lhs));
            }
        }
        // What kept rewrites write, and what they merge: a variable binds
        // to, and a rewrite to a child joins its root with, what new facts
        // bring.
        let mut next = vec![false; atoms.sorted.len()];
        let mut any_next = false;
        for (k, (lhs, rhs)) in pats.iter().enumerate() {
            if !keep[k] || !(kept_now[k] || binds[k].iter().any(|&a| dirty[a as usize])) {
                continue;
            }
            let mut new = written(&atoms, lhs, rhs, &facts);
            if sides[k].2 {
                new.extend(written(&atoms, rhs, lhs, &facts));
            }
            for s in new {
                let atom = s.atom as usize;
                if facts.add(s) {
                    next[atom] = true;
                    any_next = true;
                }
            }
        }
        joined = false;
        for m in &merges {
            joined |= match m {
                Merge::Atoms(a, b) => {
                    let (a, b) = (classes.id(*a), classes.id(*b));
                    classes.union(a, b)
                }
                Merge::Anything(b) => {
                    let b = b.map(|b| classes.id(b));
                    b.is_some_and(|b| classes.union(b, ANY))
                }
                Merge::Child(a, j) => {
                    let under: Vec<Option<Id>> = facts.of(*a).iter().filter_map(|s| s.kids.get(*j).map(|k| k.as_ref().map(|(x, _)| *x))).collect();
                    let ai = classes.id(*a);
                    let mut any = false;
                    for x in under {
                        let xi = x.map_or(ANY, |x| classes.id(x));
                        any |= classes.union(ai, xi);
                    }
                    any
                }
            };
        }
        if !any_next && !joined && !kept_now.iter().any(|&k| k) {
            return keep;
        }
        dirty = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: &str) -> Pat {
        Pat::Var(n.into())
    }
    fn c(value: i64) -> Pat {
        Pat::Const { bits: 32, value }
    }
    fn op(n: &str, g: i64, kids: Vec<Pat>) -> Pat {
        Pat::Halide { name: n.into(), generics: vec![g], kids }
    }
    fn instr(n: &str, kids: Vec<Pat>) -> Pat {
        Pat::Instr { name: n.into(), kids }
    }
    fn shr(c: i64) -> Pat {
        op("shr", 32, vec![v("a"), Pat::Const { bits: 32, value: c }])
    }
    /// The shapes of a kernel given as terms (a variable is a leaf).
    fn kernel(terms: &[Pat]) -> Vec<Shape> {
        fn leafy(p: &Pat) -> Pat {
            match p {
                Pat::Var(_) => Pat::Instr { name: "leaf".into(), kids: vec![] },
                Pat::Halide { name, generics, kids } => Pat::Halide { name: name.clone(), generics: generics.clone(), kids: kids.iter().map(leafy).collect() },
                Pat::Instr { name, kids } => Pat::Instr { name: name.clone(), kids: kids.iter().map(leafy).collect() },
                c => c.clone(),
            }
        }
        terms.iter().flat_map(|t| shapes(&leafy(t))).collect()
    }

    /// A left side's constant must sit where the kernel, or an instance
    /// that can itself match, puts it, however late in the list.
    #[test]
    fn only_instances_whose_constants_can_appear_are_kept() {
        let srli = |c| instr("srli", vec![v("a"), Pat::Const { bits: 8, value: c }]);
        let x = v("x");
        let (s2, s3, s7, s9) = (shr(2), shr(3), shr(7), shr(9));
        let (i3, i7, i9) = (srli(3), srli(7), srli(9));
        // The last writes the constant the first needs.
        let sides = [(&s3, &i3, false), (&s7, &i7, false), (&s9, &i9, false), (&s2, &s3, false), (&x, &x, false)];
        assert_eq!(matchable(&sides, kernel(&[shr(2), shr(7)])), [true, true, false, true, true]);
        assert_eq!(matchable(&sides, kernel(&[op("shr", 32, vec![v("a"), v("b")])])), [false, false, false, false, true]);
        // Without a `shr` at 32 bits in the kernel, no constant helps.
        assert_eq!(matchable(&sides, kernel(&[op("add", 32, vec![c(2), c(7)])])), [false, false, false, false, true]);
    }

    /// The constant must be under the op that needs it: a `broadcast` of
    /// 30 under another op does not make a rounding shift by 30, so the
    /// expansion by `c - 1` does not chain from 31 down to 2.
    #[test]
    fn a_constant_under_another_op_does_not_count() {
        let bc = |k: Pat| op("broadcast", 32, vec![k]);
        let rsr = |k: Pat| op("rsr", 32, vec![v("x"), bc(k)]);
        let expand = |k: i64| (rsr(c(k)), op("sub", 32, vec![op("shr", 32, vec![v("x"), bc(c(k - 1))]), op("shr", 32, vec![v("x"), bc(c(k))])]));
        let rules: Vec<(Pat, Pat)> = (2..=31).map(expand).collect();
        let sides: Vec<(&Pat, &Pat, bool)> = rules.iter().map(|(l, r)| (l, r, false)).collect();
        // The kernel shifts by a variable amount, and multiplies by 31.
        let k = kernel(&[rsr(v("s")), op("mul", 32, vec![v("y"), bc(c(31))])]);
        assert!(matchable(&sides, k).iter().all(|&m| !m));
        // A rounding shift by 31: only that one expands (its right side
        // has no rounding shift by 30).
        let k = kernel(&[rsr(c(31))]);
        let m = matchable(&sides, k);
        assert_eq!(m.iter().filter(|&&m| m).count(), 1);
        assert!(m[29]);
    }

    /// A variable of a right side stands for what it was bound to, not for
    /// anything: splitting a shift by a splat of a leaf gives halves shifted
    /// by splats of that leaf, which no expansion by a constant matches.
    #[test]
    fn a_right_side_variable_is_what_it_was_bound_to() {
        let bc = |n: i64, k: Pat| op("broadcast", n, vec![k]);
        let cat = |a: Pat, b: Pat| op("concat", 32, vec![a, b]);
        let split_bc = (bc(32, v("x")), cat(bc(16, v("x")), bc(16, v("x"))));
        let rsr = |n: i64, a: Pat, b: Pat| op("rsr", n, vec![a, b]);
        let split_rsr = (rsr(32, cat(v("a"), v("b")), cat(v("c"), v("d"))), cat(rsr(16, v("a"), v("c")), rsr(16, v("b"), v("d"))));
        let expand = |k: i64| (rsr(16, v("x"), bc(16, c(k))), op("shr", 16, vec![v("x"), bc(16, c(k - 1))]));
        let (e3, e9) = (expand(3), expand(9));
        let sides = [(&split_bc.0, &split_bc.1, false), (&split_rsr.0, &split_rsr.1, false), (&e3.0, &e3.1, false), (&e9.0, &e9.1, false)];
        let by_leaf = kernel(&[rsr(32, bc(32, v("p")), bc(32, v("s")))]);
        assert_eq!(matchable(&sides, by_leaf), [true, true, false, false]);
        // By the constant 9, the split halves are shifts by 9.
        let by_nine = kernel(&[rsr(32, bc(32, v("p")), bc(32, c(9)))]);
        assert_eq!(matchable(&sides, by_nine), [true, true, false, true]);
    }

    /// A broadcast's class holds one constant's broadcast, whatever else
    /// joins it: a divisor under `mod` is told apart from one elsewhere
    /// even when a rule puts an instruction in the broadcast's class.
    #[test]
    fn a_broadcast_is_its_constant() {
        let bc = |k: i64| Pat::Halide { name: "broadcast".into(), generics: vec![1, 32, 8], kids: vec![c(k)] };
        let md = |k: i64| op("mod", 32, vec![v("x"), bc(k)]);
        let set1 = (bc(256), instr("set1", vec![c(256)]));
        // A shift by 7 puts a broadcast of 7 in the e-graph, not under mod.
        let k = || kernel(&[md(256), op("shr", 32, vec![v("y"), bc(7)])]);
        let (m7, m256) = ((md(7), instr("div7", vec![v("x")])), (md(256), instr("and255", vec![v("x")])));
        let sides = [(&set1.0, &set1.1, false), (&m7.0, &m7.1, false), (&m256.0, &m256.1, false)];
        assert_eq!(matchable(&sides, k()), [true, false, true]);
        // Without the broadcast's own class joined, as before.
        assert_eq!(matchable(&sides[1..], k()), [false, true]);
    }

    /// An inner op or instruction of a left side must be in the kernel or
    /// written by an instance that can match; a two-way rule also matches
    /// its right side.
    #[test]
    fn only_instances_whose_inner_ops_can_appear_are_kept() {
        // add(widen8(a), widen8(b)) -> vpaddw(vpmovzx(a), vpmovzx(b)); widen8 never occurs.
        let add_wide = op("add", 16, vec![op("widen", 8, vec![v("a")]), op("widen", 8, vec![v("b")])]);
        let paddw = instr("vpaddw", vec![instr("vpmovzx", vec![v("a")]), instr("vpmovzx", vec![v("b")])]);
        // A fix-up over an instruction some matchable rule writes, and one nobody writes.
        let fix = instr("vpmovzx", vec![v("a")]);
        let fixed = op("widen", 8, vec![v("a")]);
        let orphan = instr("vpshufb", vec![v("a"), v("b")]);
        let add16 = op("add", 16, vec![v("a"), v("b")]);
        let plain = instr("vpaddw", vec![v("a"), v("b")]);
        let sides = [(&add_wide, &paddw, false), (&fix, &fixed, false), (&orphan, &v("a"), false), (&add16, &plain, false)];
        let k = || kernel(&[add16.clone()]);
        assert_eq!(matchable(&sides, k()), [false, false, false, true]);
        // widen8 never appears, so a one-way rule from it never matches; a
        // two-way one matches its right side, which the add rule writes,
        // and then writes widen8 itself.
        assert_eq!(matchable(&[(&fixed, &fix, false), (&add16, &paddw, false)], k()), [false, true]);
        assert_eq!(matchable(&[(&fixed, &fix, true), (&fixed, &fix, false), (&add16, &paddw, false)], k()), [true, true, true]);
    }

    /// Merged classes: a rewrite to its operand (a same-width cast) puts
    /// the operand's nodes in the cast's class, so a pattern over the
    /// operand under the cast's parent can match.
    #[test]
    fn a_rewrite_to_an_operand_joins_their_classes() {
        let cast = |k: Pat| op("cast", 8, vec![k]);
        let neg = |k: Pat| op("neg", 8, vec![k]);
        // abs(neg(x)) needs a neg under abs; the kernel has abs(cast(neg(y))).
        let lhs = op("abs", 8, vec![neg(v("x"))]);
        let rhs = instr("vpabsb", vec![v("x")]);
        let drop_cast = (cast(v("z")), v("z"));
        let k = || kernel(&[op("abs", 8, vec![cast(neg(v("y")))])]);
        assert_eq!(matchable(&[(&lhs, &rhs, false)], k()), [false]);
        assert_eq!(matchable(&[(&lhs, &rhs, false), (&drop_cast.0, &drop_cast.1, false)], k()), [true, true]);
        // The same with the rules the other way round in the list.
        assert_eq!(matchable(&[(&drop_cast.0, &drop_cast.1, false), (&lhs, &rhs, false)], k()), [true, true]);
    }

    /// A rewrite from an op to the same op (with other children) puts two
    /// of its nodes in one class: their parents see either's children.
    #[test]
    fn a_rewrite_to_the_same_op_crowds_its_class() {
        let f = |k: Pat| op("f", 8, vec![k]);
        // g(f(b(x))) needs f over b; the kernel has g(f(a(y))), and a rule
        // turns f(a(x)) into f(b(x)).
        let lhs = op("g", 8, vec![f(op("b", 8, vec![v("x")]))]);
        let rhs = instr("gb", vec![v("x")]);
        let swap = (f(op("a", 8, vec![v("x")])), f(op("b", 8, vec![v("x")])));
        let k = || kernel(&[op("g", 8, vec![f(op("a", 8, vec![v("y")]))])]);
        assert_eq!(matchable(&[(&lhs, &rhs, false)], k()), [false]);
        assert_eq!(matchable(&[(&lhs, &rhs, false), (&swap.0, &swap.1, false)], k()), [true, true]);
    }

    /// A rewrite between two ops merges their classes: a pattern that needs
    /// the second op's node under a parent matches where the first one is.
    #[test]
    fn a_rewrite_joins_its_roots_classes() {
        let lhs = op("shr", 32, vec![v("a"), op("broadcast", 32, vec![c(4)])]);
        let rhs = instr("psrad", vec![v("a"), c(4)]);
        // mul(x, 16) = shl(x, 4) writes a shl; a rule needs add(shl(.., 4), ..).
        let to_shl = (op("mul", 32, vec![v("x"), op("broadcast", 32, vec![c(16)])]), op("shl", 32, vec![v("x"), op("broadcast", 32, vec![c(4)])]));
        let needs_shl = (op("add", 32, vec![op("shl", 32, vec![v("p"), op("broadcast", 32, vec![c(4)])]), v("q")]), instr("lea", vec![v("p"), v("q")]));
        let k = || kernel(&[op("add", 32, vec![op("mul", 32, vec![v("y"), op("broadcast", 32, vec![c(16)])]), v("z")])]);
        assert_eq!(matchable(&[(&needs_shl.0, &needs_shl.1, false)], k()), [false]);
        assert_eq!(matchable(&[(&needs_shl.0, &needs_shl.1, false), (&to_shl.0, &to_shl.1, false), (&lhs, &rhs, false)], k()), [true, true, false]);
    }
}
