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

/// An [`Atom`] as an [`Analysis`] numbers it: in the order first met, so
/// the same kernel and instances, added in the same order, get the same
/// ids, and every set of them iterates in the same order. Facts and
/// classes then copy and compare integers, not op names.
type Id = u32;

/// A [`Kid`] of [`Id`]s.
type IKid = Option<(Id, Vec<Option<Id>>)>;

/// A [`Shape`] of [`Id`]s.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct IShape {
    atom: Id,
    kids: Vec<IKid>,
}

/// A rule side of [`Id`]s: a variable (numbered by name, see
/// [`Analysis::var`]), or a node (an atom and its children).
#[derive(PartialEq)]
enum IPat {
    Var(u32),
    Node(Id, Vec<IPat>),
}

impl IPat {
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

/// The atoms met so far, by id, and the ids by atom (looked up without
/// building an [`Atom`] from a pattern's borrowed name).
struct Atoms {
    list: Vec<Atom>,
    consts: HashMap<(i64, i64), Id>,
    halide: HashMap<String, HashMap<Vec<i64>, Id>>,
    instrs: HashMap<String, Id>,
    leaf: Id,
    /// `Other`'s id: what [`grand`] makes of an atom that is not a constant.
    other: Id,
}

impl Atoms {
    fn new() -> Self {
        Atoms { list: vec![Atom::Leaf, Atom::Other], consts: HashMap::new(), halide: HashMap::new(), instrs: HashMap::new(), leaf: 0, other: 1 }
    }
    fn len(&self) -> usize {
        self.list.len()
    }
    fn push(list: &mut Vec<Atom>, a: Atom) -> Id {
        list.push(a);
        (list.len() - 1) as Id
    }
    fn halide_id(&mut self, name: &str, generics: &[i64]) -> Id {
        if let Some(&id) = self.halide.get(name).and_then(|g| g.get(generics)) {
            return id;
        }
        let id = Self::push(&mut self.list, Atom::Halide(name.to_string(), generics.to_vec()));
        self.halide.entry(name.to_string()).or_default().insert(generics.to_vec(), id);
        id
    }
    fn instr_id(&mut self, name: &str) -> Id {
        if let Some(&id) = self.instrs.get(name) {
            return id;
        }
        let id = Self::push(&mut self.list, Atom::Instr(name.to_string()));
        self.instrs.insert(name.to_string(), id);
        id
    }
    fn const_id(&mut self, bits: i64, value: i64) -> Id {
        let list = &mut self.list;
        *self.consts.entry((bits, value)).or_insert_with(|| Self::push(list, Atom::Const(bits, value)))
    }
    fn id(&mut self, a: &Atom) -> Id {
        match a {
            Atom::Const(b, v) => self.const_id(*b, *v),
            Atom::Halide(n, g) => self.halide_id(n, g),
            Atom::Instr(n) => self.instr_id(n),
            Atom::Leaf => self.leaf,
            Atom::Other => self.other,
        }
    }
    /// The atom of pattern node `p` (`None` for a variable).
    fn pat_id(&mut self, p: &Pat) -> Option<Id> {
        match p {
            Pat::Var(_) => None,
            Pat::Const { bits, value } => Some(self.const_id(*bits, *value)),
            Pat::Halide { name, generics, .. } => Some(self.halide_id(name, generics)),
            Pat::Instr { name, .. } => Some(self.instr_id(name)),
        }
    }
    fn is_const(&self, a: Id) -> bool {
        matches!(self.list[a as usize], Atom::Const(..))
    }
    fn is_broadcast(&self, a: Id) -> bool {
        matches!(&self.list[a as usize], Atom::Halide(n, _) if n == "broadcast")
    }
    /// A broadcast's element width (its generics are sign, width, lanes).
    fn broadcast_width(&self, a: Id) -> i64 {
        match &self.list[a as usize] {
            Atom::Halide(_, g) if g.len() == 3 => g[1],
            _ => 64,
        }
    }
    /// Whether constants `a` and `b` differ in their low `bits` bits (no
    /// answer, false, for anything but two constants).
    fn different_constants(&self, a: Id, b: Id, bits: i64) -> bool {
        match (&self.list[a as usize], &self.list[b as usize]) {
            (Atom::Const(wa, va), Atom::Const(wb, vb)) => {
                let bits = bits.min(*wa).min(*wb);
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
    fn shape(&mut self, s: &Shape) -> IShape {
        let kids = s.kids.iter().map(|k| k.as_ref().map(|(a, g)| (self.id(a), g.iter().map(|g| g.as_ref().map(|g| self.id(g))).collect()))).collect();
        IShape { atom: self.id(&s.atom), kids }
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
    fn new() -> Self {
        Classes { parent: vec![ANY], size: vec![1], crowded: BTreeSet::new(), nonconst: vec![true] }
    }
    /// One set per atom met since, each on its own.
    fn grow(&mut self, atoms: &Atoms) {
        for a in self.parent.len() - 1..atoms.len() {
            self.parent.push(a + 1);
            self.size.push(1);
            self.nonconst.push(!atoms.is_const(a as Id));
        }
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
    fn grow(&mut self, atoms: &Atoms) {
        self.by_atom.resize_with(atoms.len(), BTreeSet::new);
    }
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
fn can_match(side: &[u32], shapes: &[IShape], facts: &Facts, classes: &mut Classes, atoms: &Atoms) -> bool {
    side.iter().map(|&s| &shapes[s as usize]).all(|want| facts.of(want.atom).iter().any(|h| h.kids.len() == want.kids.len() && h.kids.iter().zip(&want.kids).all(|(hk, wk)| kid_matches(classes, atoms, hk, wk))))
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
    let mut bound: HashMap<u32, BTreeSet<IKid>> = HashMap::new();
    if let IPat::Var(v) = from {
        bound.entry(*v).or_default().insert(None);
    }
    from.walk(&mut |n| {
        let Some(atom) = n.atom() else { return };
        for (j, k) in n.kids().iter().enumerate() {
            if let IPat::Var(v) = k {
                let found = facts.of(atom).iter().filter_map(|f| f.kids.get(j).cloned());
                bound.entry(*v).or_default().extend(found);
            }
        }
    });
    // A variable bound to anything at one of its places is anything.
    let options = |v: u32| -> Vec<IKid> {
        match bound.get(&v) {
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
                IPat::Var(v) => options(*v),
                IPat::Node(a, kids) => {
                    let grand: Vec<Vec<Option<Id>>> = kids
                        .iter()
                        .map(|g| match g {
                            IPat::Var(w) => {
                                let mut ids: Vec<Option<Id>> = options(*w).into_iter().map(|o| atoms.grand(o.map(|(x, _)| x))).collect();
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
pub fn matchable(sides: &[(&Pat, &Pat, bool)], kernel: impl IntoIterator<Item = Shape>) -> Vec<bool> {
    let mut a = Analysis::new(kernel);
    a.add(sides);
    a.run(&mut |_| None);
    a.kept()
}

/// The analysis of one kernel. Atoms are numbered as they are met, so no
/// list of every node's atom of every side is built first (2 MB of
/// softmax's peak). Instances can be added between [`run`](Self::run)s;
/// the facts and merges come from kept instances only, so the instances
/// kept are those kept given all of them at once.
///
/// Rounds run until nothing changes. Work is redone only where it can
/// change: a left side is tried again when a fact about one of its atoms is
/// new or two classes joined (an instance added since the last round is
/// tried once anyway), and what a kept rewrite writes is worked out again
/// when a fact about one of its binding side's atoms is new.
pub(super) struct Analysis {
    atoms: Atoms,
    /// Variable names, numbered: `IPat::Var`'s number.
    vars: HashMap<String, u32>,
    facts: Facts,
    /// Atoms with facts new since the last round.
    dirty: Vec<bool>,
    classes: Classes,
    /// Per instance: its sides, their shapes, whether it runs both ways,
    /// the atoms its match and what it writes depend on (its left side's,
    /// and its right side's where it runs both ways; sorted).
    /// A right side is `None` until its instance is kept, for those
    /// added by [`add_left`](Self::add_left).
    pats: Vec<(IPat, Option<IPat>)>,
    shaped: Vec<(Vec<u32>, Vec<u32>)>,
    /// The sides' node shapes, each once (most instances of a rule share
    /// all but a few): a shape per node was 6 MB of softmax's peak.
    shapes: Vec<IShape>,
    shape_ids: HashMap<IShape, u32>,
    two_way: Vec<bool>,
    needs: Vec<Vec<Id>>,
    binds: Vec<Vec<Id>>,
    /// Per instance: whether it can match.
    keep: Vec<bool>,
    /// Per instance: whether its right side turned out unusable, so it is
    /// never kept (as if it had not been added).
    dead: Vec<bool>,
    /// Instances from here on were added since the last round.
    untried: usize,
    merges: Vec<Merge>,
    /// Whether the last round joined two classes.
    joined: bool,
}

impl Analysis {
    pub(super) fn new(kernel: impl IntoIterator<Item = Shape>) -> Self {
        let mut atoms = Atoms::new();
        let shapes: Vec<IShape> = kernel.into_iter().map(|s| atoms.shape(&s)).collect();
        let mut a = Analysis {
            facts: Facts { by_atom: Vec::new() },
            dirty: Vec::new(),
            classes: Classes::new(),
            atoms,
            vars: HashMap::new(),
            pats: Vec::new(),
            shaped: Vec::new(),
            shapes: Vec::new(),
            shape_ids: HashMap::new(),
            two_way: Vec::new(),
            needs: Vec::new(),
            binds: Vec::new(),
            keep: Vec::new(),
            dead: Vec::new(),
            untried: 0,
            merges: Vec::new(),
            joined: false,
        };
        a.grow();
        for s in shapes {
            a.dirty[s.atom as usize] = true;
            a.facts.add(s);
        }
        a
    }

    /// Sizes the per-atom tables to the atoms met.
    fn grow(&mut self) {
        let n = self.atoms.len();
        self.facts.grow(&self.atoms);
        self.dirty.resize(n, false);
        self.classes.grow(&self.atoms);
    }

    fn pat(&mut self, p: &Pat) -> IPat {
        match p {
            Pat::Var(v) => {
                let next = self.vars.len() as u32;
                IPat::Var(*self.vars.entry(v.clone()).or_insert(next))
            }
            _ => {
                let atom = self.atoms.pat_id(p).expect("a node");
                IPat::Node(atom, kids_of(p).iter().map(|k| self.pat(k)).collect())
            }
        }
    }

    fn intern(&mut self, side: Vec<IShape>) -> Vec<u32> {
        side.into_iter()
            .map(|s| {
                let next = self.shapes.len() as u32;
                *self.shape_ids.entry(s).or_insert_with_key(|s| {
                    self.shapes.push(s.clone());
                    next
                })
            })
            .collect()
    }

    /// Appends instances (left, right, two-way), numbered on from those
    /// added before.
    fn add(&mut self, sides: &[(&Pat, &Pat, bool)]) {
        for &(l, r, two_way) in sides {
            let (l, r) = (self.pat(l), self.pat(r));
            let side = |collect: fn(&IPat, &mut BTreeSet<Id>)| {
                let mut s = BTreeSet::new();
                collect(&l, &mut s);
                if two_way {
                    collect(&r, &mut s);
                }
                s.into_iter().collect::<Vec<Id>>()
            };
            let (needs, binds) = (side(atoms_of), side(binding_atoms));
            let (ls, rs) = (ishapes(&self.atoms, &l), if two_way { ishapes(&self.atoms, &r) } else { Vec::new() });
            let shaped = (self.intern(ls), self.intern(rs));
            self.push(l, Some(r), two_way, needs, binds, shaped);
        }
        self.grow();
    }

    /// Appends one-way instances by their left sides: each one's right side
    /// is asked of [`run`](Self::run)'s `rhs_of` once the left side can match.
    pub(super) fn add_left(&mut self, lefts: &[&Pat]) {
        for l in lefts {
            let l = self.pat(l);
            let (mut needs, mut binds) = (BTreeSet::new(), BTreeSet::new());
            atoms_of(&l, &mut needs);
            binding_atoms(&l, &mut binds);
            let ls = ishapes(&self.atoms, &l);
            let shaped = (self.intern(ls), Vec::new());
            self.push(l, None, false, needs.into_iter().collect(), binds.into_iter().collect(), shaped);
        }
        self.grow();
    }

    fn push(&mut self, l: IPat, r: Option<IPat>, two_way: bool, needs: Vec<Id>, binds: Vec<Id>, shaped: (Vec<u32>, Vec<u32>)) {
        self.needs.push(needs);
        self.binds.push(binds);
        self.shaped.push(shaped);
        self.pats.push((l, r));
        self.two_way.push(two_way);
        self.keep.push(false);
        self.dead.push(false);
    }

    /// Per instance added: whether it can match.
    pub(super) fn kept(self) -> Vec<bool> {
        self.keep
    }

    /// Rounds until nothing changes; returns the instances kept in them.
    /// `rhs_of(k)`: the right side of instance `k` added by
    /// [`add_left`](Self::add_left), asked once its left side can match
    /// (`None`: it cannot be loaded, and is never kept).
    pub(super) fn run<'p>(&mut self, rhs_of: &mut dyn FnMut(usize) -> Option<&'p Pat>) -> Vec<usize> {
        let mut newly = Vec::new();
        let n = self.pats.len();
        loop {
            let mut kept_now = vec![false; n];
            for k in 0..n {
                if self.keep[k] || self.dead[k] || !(k >= self.untried || self.joined || self.needs[k].iter().any(|&a| self.dirty[a as usize])) {
                    continue;
                }
                let (l, r) = &self.shaped[k];
                let shapes = &self.shapes;
                if !(can_match(l, shapes, &self.facts, &mut self.classes, &self.atoms) || (self.two_way[k] && can_match(r, shapes, &self.facts, &mut self.classes, &self.atoms))) {
                    continue;
                }
                if self.pats[k].1.is_none() {
                    match rhs_of(k) {
                        Some(r) => self.pats[k].1 = Some(self.pat(r)),
                        None => {
                            self.dead[k] = true;
                            continue;
                        }
                    }
                }
                self.keep[k] = true;
                kept_now[k] = true;
                newly.push(k);
                let (lhs, rhs) = (&self.pats[k].0, self.pats[k].1.as_ref().expect("set above"));
                self.merges.push(merge_of(lhs, rhs));
                if self.two_way[k] {
                    self.merges.push(merge_of(rhs, lhs));
                }
            }
            self.untried = n;
            // Right sides met new atoms.
            self.grow();
            // What kept rewrites write, and what they merge: a variable
            // binds to, and a rewrite to a child joins its root with, what
            // new facts bring.
            let mut next = vec![false; self.atoms.len()];
            let mut any_next = false;
            for (k, (lhs, rhs)) in self.pats.iter().enumerate() {
                if !self.keep[k] || !(kept_now[k] || self.binds[k].iter().any(|&a| self.dirty[a as usize])) {
                    continue;
                }
                let rhs = rhs.as_ref().expect("a kept instance's right side");
                let mut new = written(&self.atoms, lhs, rhs, &self.facts);
                if self.two_way[k] {
                    new.extend(written(&self.atoms, rhs, lhs, &self.facts));
                }
                for s in new {
                    let atom = s.atom as usize;
                    if self.facts.add(s) {
                        next[atom] = true;
                        any_next = true;
                    }
                }
            }
            let classes = &mut self.classes;
            let facts = &self.facts;
            let mut joined = false;
            for m in &self.merges {
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
            self.joined = joined;
            self.dirty = next;
            if !any_next && !joined && !kept_now.iter().any(|&k| k) {
                return newly;
            }
        }
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

    /// Rounding shifts by 2..=9, each to a shift by one less, and shifts by
    /// 1..=9 to an instruction (instances 0..8, then 8..17); a kernel with
    /// a rounding shift by 5 and a shift by 8 keeps 3 (rsr 5, shr 4, shr 8).
    fn rounding_shifts() -> (Vec<(Pat, Pat)>, impl Fn() -> Vec<Shape>) {
        let bc = |k: i64| op("broadcast", 32, vec![c(k)]);
        let rsr = move |k: i64| op("rsr", 32, vec![v("x"), bc(k)]);
        let shr = move |k: i64| op("shr", 32, vec![v("x"), bc(k)]);
        let rules = (2..=9).map(|k| (rsr(k), shr(k - 1))).chain((1..=9).map(|k| (shr(k), instr("psrad", vec![v("x"), c(k)])))).collect();
        (rules, move || kernel(&[rsr(5), shr(8)]))
    }

    /// Instances added after a run are tried against what the kept ones
    /// wrote: the same instances are kept as when all come at once.
    #[test]
    fn instances_added_later_are_kept_as_if_added_first() {
        let (rules, k) = rounding_shifts();
        let sides: Vec<(&Pat, &Pat, bool)> = rules.iter().map(|(l, r)| (l, r, false)).collect();
        let at_once = matchable(&sides, k());
        assert_eq!(at_once.iter().filter(|&&m| m).count(), 3);
        // The shifts first, then the rounding shifts that write one.
        let mut a = Analysis::new(k());
        a.add(&sides[8..]);
        assert_eq!(a.run(&mut |_| None), [7]);
        a.add(&sides[..8]);
        let mut later = a.run(&mut |_| None);
        later.sort();
        assert_eq!(later, [3, 12]);
        // `keep` is in the order added: the shifts, then the rounding shifts.
        let reordered: Vec<bool> = a.keep[9..].iter().chain(&a.keep[..9]).copied().collect();
        assert_eq!(reordered, at_once);
    }

    /// By left sides only: a right side is asked for once its left side
    /// can match, and one that cannot be loaded writes nothing.
    #[test]
    fn a_right_side_is_asked_for_only_once_its_left_side_can_match() {
        let (rules, k) = rounding_shifts();
        let lefts: Vec<&Pat> = rules.iter().map(|(l, _)| l).collect();
        let run = |unusable: usize| {
            let mut a = Analysis::new(k());
            a.add_left(&lefts);
            let mut asked = Vec::new();
            a.run(&mut |k| {
                asked.push(k);
                (k != unusable).then(|| &rules[k].1)
            });
            asked.sort();
            (asked, a.kept())
        };
        let (asked, kept) = run(usize::MAX);
        assert_eq!(asked, [3, 11, 15]);
        assert_eq!(kept.iter().filter(|&&k| k).count(), 3);
        // rsr(5)'s right side cannot be loaded: nothing writes shr(4).
        let (asked, kept) = run(3);
        assert_eq!(asked, [3, 15]);
        assert_eq!(kept.iter().enumerate().filter(|(_, k)| **k).map(|(i, _)| i).collect::<Vec<_>>(), [15]);
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
