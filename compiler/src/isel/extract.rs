//! Stage 4, extraction by DAG cost.
//!
//! egglog 3.0's extractor sums a term's cost as a tree, so a subterm used
//! twice is paid twice; in generated code it is computed once. This module
//! reads the e-graph out of egglog (`Read::constructor_enodes`, one table per
//! constructor, children as canonical e-class values) into a [`Graph`] and
//! extracts from it with a greedy DAG algorithm (as extraction-gym's
//! `greedy-dag`): a node's cost is the sum, over the distinct e-classes of
//! the cheapest sub-DAG under it, of each class's chosen node cost. The
//! extractor runs once per e-graph and serves every root.
//!
//! Node costs: an x86 instruction costs its reciprocal throughput in
//! cycles, from the measured table of the target's microarchitecture
//! ([`cost_table_for_target`]: `isa/costs/x86-znver4.csv` for
//! `avx512_zen4`) when it has a row, else the spec's `cost` line (reported
//! as a fallback); leaves and constants cost 0. A Halide op
//! is never target code: it is taken only where a class has nothing else,
//! at [`CostModel::naive`] per op, and each one taken is counted as a
//! subterm for the naive lowering.

use super::encode::{CONST, LEAF, Op};
use egglog::{Core, EGraph, Read, Value};
use misaal_isa::SpecLibrary;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// How an egglog constructor's columns map back to an [`Op`].
#[derive(Clone, Debug)]
pub enum Layout {
    Halide { name: String, generics: usize },
    Instr { name: String },
    Leaf,
    Const,
}

#[derive(Clone, Debug)]
pub struct GNode {
    pub op: Op,
    pub class: usize,
    pub kids: Vec<usize>,
    /// Legalization glue ([`Graph::mark_glue`]): a slice or concat that
    /// only regroups whole registers, so it costs no instruction.
    pub glue: bool,
    /// Glue through memory ([`Glue::Mem`]): costs [`MEM_GLUE_COST`].
    pub mem: bool,
}

/// An e-graph as plain data: nodes, each in one class, children as classes.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub nodes: Vec<GNode>,
    pub classes: usize,
    by_value: HashMap<Value, usize>,
}

impl Graph {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh class (for graphs built by hand).
    pub fn add_class(&mut self) -> usize {
        self.classes += 1;
        self.classes - 1
    }

    pub fn add_node(&mut self, op: Op, class: usize, kids: Vec<usize>) -> usize {
        self.nodes.push(GNode { op, class, kids, glue: false, mem: false });
        self.nodes.len() - 1
    }

    fn class_for(&mut self, v: Value) -> usize {
        if let Some(&c) = self.by_value.get(&v) {
            return c;
        }
        let c = self.add_class();
        self.by_value.insert(v, c);
        c
    }

    /// The class of an egglog e-class value, if the graph has it.
    pub fn class_of(&self, v: Value) -> Option<usize> {
        self.by_value.get(&v).copied()
    }

    /// Reads every (non-subsumed) row of the given constructors.
    pub fn from_egraph(egraph: &EGraph, ctors: &[(String, Layout)]) -> Result<Graph, String> {
        let mut g = Graph::new();
        // Each e-node becomes a node as it is read (classes numbered in the
        // order they are met, a node's class before its children's): a
        // list of the rows first held a second copy of the graph while the
        // e-graph was alive, at a compile's peak.
        for (ctor, layout) in ctors {
            egraph
                .read(|rs| {
                    rs.constructor_enodes(ctor, |n| {
                        if n.subsumed {
                            return;
                        }
                        let c = n.children;
                        let (op, kids) = match layout {
                            Layout::Halide { name, generics } => (Op::Halide { name: name.clone(), generics: c[..*generics].iter().map(|v| rs.value_to_base::<i64>(*v)).collect() }, &c[*generics..]),
                            Layout::Instr { name } => (Op::Instr { name: name.clone() }, c),
                            Layout::Leaf => (Op::Leaf { text: rs.value_to_base::<egglog::sort::S>(c[0]).0.clone(), bits: rs.value_to_base::<i64>(c[1]) }, &c[2..]),
                            Layout::Const => (Op::Const { bits: rs.value_to_base::<i64>(c[0]), value: rs.value_to_base::<i64>(c[1]) }, &c[2..]),
                        };
                        let class = g.class_for(n.eclass);
                        let kids = kids.iter().map(|&k| g.class_for(k)).collect();
                        g.add_node(op, class, kids);
                    })
                })
                .map_err(|e| format!("reading `{ctor}`: {e}"))?;
        }
        Ok(g)
    }

    /// The classes that hold a constant: a literal, or an instruction of
    /// constants only (a broadcast of an immediate, a zero register). Their
    /// value is loop-invariant: the C compiler materializes it once, out of
    /// the loop, so it should not weigh like an instruction of the loop.
    pub fn constant_classes(&self) -> Vec<bool> {
        let mut constant = vec![false; self.classes];
        let mut changed = true;
        while changed {
            changed = false;
            for n in &self.nodes {
                let is = match n.op {
                    Op::Const { .. } => true,
                    Op::Instr { .. } => !n.mem && n.kids.iter().all(|&k| constant[k]),
                    Op::Halide { .. } | Op::Leaf { .. } => false,
                };
                if is && !constant[n.class] {
                    constant[n.class] = true;
                    changed = true;
                }
            }
        }
        constant
    }

    /// Marks legalization glue (see [`glue_shape`]) for registers of
    /// `register_bits`: a slice of half a register is free only out of a
    /// leaf (a load or a lane array, read at an offset); out of a register
    /// it takes an instruction, which a proved rule must supply. With
    /// `sub_register` (HVX), slices and concats of values narrower than a
    /// register are glue through memory too ([`sub_register_glue`]); on
    /// every target, so are the pads of lane counts that are not powers of
    /// two ([`odd_lanes_glue`]), and those of vectors narrower than the
    /// `narrowest` register (x86's 128 bits: a u8x8 doubled to a u8x16).
    pub fn mark_glue(&mut self, register_bits: i64, sub_register: bool, narrowest: i64) {
        // A class is leafy if it holds a leaf, or a slice of a leafy class
        // (a half of a half of a load is still read straight from memory).
        let mut leafy = vec![false; self.classes];
        let mut changed = true;
        while changed {
            changed = false;
            for n in &self.nodes {
                let is = match &n.op {
                    Op::Leaf { .. } => true,
                    op @ Op::Halide { .. } => glue_shape(op, register_bits).is_some() && n.kids.len() == 1 && leafy[n.kids[0]],
                    _ => false,
                };
                if is && !leafy[n.class] {
                    leafy[n.class] = true;
                    changed = true;
                }
            }
        }
        for n in &mut self.nodes {
            n.glue = match glue_shape(&n.op, register_bits) {
                Some(Glue::Free) => true,
                Some(Glue::FromLeaf) => leafy[n.kids[0]],
                Some(Glue::Mem) | None => false,
            };
            let below = if sub_register { register_bits } else { narrowest };
            if !n.glue && (sub_register_glue(&n.op, below) == Some(Glue::Mem) || odd_lanes_glue(&n.op).is_some()) {
                (n.glue, n.mem) = (true, true);
            }
        }
    }

    /// The constructors and layouts of [`super::encode::declarations`] plus the given target instructions.
    pub fn layouts(halide: &SpecLibrary, instrs: impl IntoIterator<Item = String>) -> Vec<(String, Layout)> {
        let mut v = vec![(LEAF.to_string(), Layout::Leaf), (CONST.to_string(), Layout::Const)];
        for name in halide.generic_names() {
            let g = halide.generic(name).expect("listed");
            v.push((super::encode::halide_ctor(name), Layout::Halide { name: name.to_string(), generics: g.generics.len() }));
        }
        for name in instrs {
            v.push((super::encode::instr_ctor(&name), Layout::Instr { name }));
        }
        v
    }
}

/// x86 vector registers are at most this wide here (AVX2); each target
/// says its own in [`super::Target::register_bits`]. A value wider than
/// that is held as several registers, low lanes first.
pub const REGISTER_BITS: i64 = 256;

/// How a slice or concat regroups registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Glue {
    /// Picks or joins whole registers: no instruction.
    Free,
    /// A 128-bit piece: free out of a leaf, else an instruction.
    FromLeaf,
    /// Values narrower than a register (HVX's u8x64): a slice is a copy of
    /// bytes (a register stored first), a concat of two is built in an
    /// aligned temporary (and loaded when it fills a register).
    Mem,
}

/// The cost of glue through memory: about an instruction, so that a chain
/// of padded ops keeps its registers ([`Glue::Mem`]) where rules allow.
pub const MEM_GLUE_COST: f64 = 1.0;

/// The share of its cost a constant instruction (see
/// [`Graph::constant_classes`]) weighs: hoisted out of the loop, it is paid
/// once, not per iteration. Not zero, so that of two equal bodies the one
/// with fewer or cheaper constants wins.
pub const HOISTED_SHARE: f64 = 0.05;

/// Whether `op` is a slice whose piece, or a concat whose two equal
/// halves, are narrower than a register of `register_bits` (whole bytes,
/// at most a pair): the glue that pad rules leave (`synth.pad-*.x2`):
/// HVX's, under its one register width, and x86's, under the 128 bits of
/// an xmm.
pub fn sub_register_glue(op: &Op, register_bits: i64) -> Option<Glue> {
    let Op::Halide { name, generics: g } = op else { return None };
    match (name.as_str(), &g[..]) {
        ("slice", &[_, e, n, m, b, 1]) if e >= 8 && e % 8 == 0 && b >= 0 && b + n <= m && n * e < register_bits && m * e <= 2 * register_bits => Some(Glue::Mem),
        ("concat", &[_, e, n, m]) if e >= 8 && e % 8 == 0 && n == m && n * e < register_bits => Some(Glue::Mem),
        _ => None,
    }
}

/// Every target: whether `op` is a slice or concat that pads a vector of a
/// lane count other than a power of two to one (24 lanes to 32), or takes
/// such a vector back out: the glue that pad rules (`synth.pad-*`) leave.
/// No register holds such a value, so it is a lane array and the glue
/// copies bytes. Power-of-two shapes are never this kind, so kernels whose
/// lane counts are powers of two select exactly as before.
pub fn odd_lanes_glue(op: &Op) -> Option<Glue> {
    let Op::Halide { name, generics: g } = op else { return None };
    let odd = |x: i64| x > 0 && x & (x - 1) != 0;
    match (name.as_str(), &g[..]) {
        ("slice", &[_, e, n, m, b, 1]) if e >= 8 && e % 8 == 0 && b >= 0 && b + n <= m && (odd(n) || odd(m)) => Some(Glue::Mem),
        ("concat", &[_, e, n, m]) if e >= 8 && e % 8 == 0 && (odd(n) || odd(m)) => Some(Glue::Mem),
        _ => None,
    }
}

/// Whether `op` is a slice or concat on the boundaries of registers of
/// `register_bits` (256 on AVX2, 128 on NEON):
/// - `slice<S,E,N,M,B,1>` whose piece (N*E bits) is half a register or a
///   multiple of a register, starting on a multiple of the piece;
/// - `concat<S,E,N,N>` of two halves that are whole registers.
pub fn glue_shape(op: &Op, register_bits: i64) -> Option<Glue> {
    let Op::Halide { name, generics: g } = op else { return None };
    match (name.as_str(), &g[..]) {
        ("slice", &[_, e, n, m, b, 1]) if e >= 8 && b >= 0 && b + n <= m => {
            let piece = n * e;
            if piece % register_bits == 0 && (b * e) % piece == 0 {
                Some(Glue::Free)
            } else if (piece == register_bits / 2 || (piece == 64 && register_bits == 256) || (register_bits == 512 && (piece == 128 || piece == 64))) && (b * e) % piece == 0 {
                // Half a register, or (x86) a 64-bit piece: loaded on its
                // own out of a load (the x86 dialect's 64-bit class); with
                // AVX-512's zmm, an xmm piece too (pmovsx/pmovzx operands).
                Some(Glue::FromLeaf)
            } else {
                None
            }
        }
        ("concat", &[_, e, n, m]) if e >= 8 && n == m && (n * e) % register_bits == 0 => Some(Glue::Free),
        _ => None,
    }
}

/// Where an instruction's cost comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CostSource {
    /// A measured table (`isa/costs/<isa>-<cpu>.csv`, `misaal isa measure`).
    Measured,
    /// The spec's `cost` line (approximate; the fallback).
    SpecLine,
    /// Neither: 1 cycle.
    Default,
}

/// The lanes a naive op is priced for at [`CostModel::naive`].
pub const NAIVE_LANES: f64 = 8.0;

pub struct CostModel {
    table: HashMap<String, (f64, CostSource)>,
    /// The cost of one Halide op of at most [`NAIVE_LANES`] lanes lowered
    /// naively (a per-lane loop); see [`CostModel::node`] for wider ones.
    pub naive: f64,
    /// Whether a measured table was read.
    pub measured_table: bool,
    /// Which table was read and why (for `--explain-isel`).
    pub choice: String,
    /// What every instruction costs on top of its table row: its slot in
    /// the front end's dispatch ([`X86_DISPATCH_COST`] on x86, else 0).
    pub dispatch: f64,
}

/// How far above twice its ymm twin a zmm row may be before it is taken
/// as a harness artifact (measurement noise and the masked forms' extra
/// mask uop stay well inside: the largest honest ratio in the Zen 4 table
/// is 4.4, a masked 64-bit op against a 0.25-cycle add).
pub const ZMM_OVER_YMM_SLACK: f64 = 3.0;

/// One x86 instruction's share of a dispatch cycle: Zen 4 (like Zen 3)
/// dispatches 6 macro-ops a cycle. Without it a zmm instruction and two
/// ymm ones of half its throughput tie (Zen 4 runs 512-bit ops as two
/// 256-bit halves), and extraction took the two ymm ones plus the
/// extracts and loads they need: twice the instructions for the same work.
pub const X86_DISPATCH_COST: f64 = 1.0 / 6.0;

/// `isa/costs` in this repository.
fn costs_dir() -> std::path::PathBuf {
    misaal_isa::bundled_spec_dir("x86").join("../../costs")
}

/// The table an x86 target falls back to when its CPU has none: AVX2's,
/// measured on the AVX2 AMD EPYC (Zen 3) this project long ran on.
const X86_AVX2_TABLE: &str = "x86-znver3";
/// The fallback of an AVX-512 target whose CPU has no table: the only one
/// with AVX-512 rows.
const X86_AVX512_TABLE: &str = "x86-znver4";

/// The default cost table of `x86` (no Halide target given): the AVX2 one.
pub fn bundled_cost_table() -> std::path::PathBuf {
    bundled_cost_table_for("x86")
}

/// The default cost table of an ISA with no Halide target given:
/// `isa/costs/x86-znver3.csv` for x86, `isa/costs/<isa>.csv` for the others
/// (it may not exist: then the specs' cost lines are the costs).
pub fn bundled_cost_table_for(isa: &str) -> std::path::PathBuf {
    match isa {
        "x86" => costs_dir().join(format!("{X86_AVX2_TABLE}.csv")),
        _ => costs_dir().join(format!("{isa}.csv")),
    }
}

/// The measured cost table for a Halide target, and why it was chosen.
/// Costs belong to a microarchitecture: an x86 target's `avx512_<cpu>`
/// feature names its CPU (`avx512_zen4` is LLVM's `znver4`), whose table is
/// `isa/costs/x86-<llvm cpu>.csv`. Fallback: an AVX-512 target whose CPU
/// has no table uses the Zen 4 table (the only one with AVX-512 rows); any
/// other x86 target the AVX2 table (Zen 3). ARM and HVX have one table each.
pub fn cost_table_for_target(isa: &str, halide_target: &str) -> (std::path::PathBuf, String) {
    if isa != "x86" {
        let p = bundled_cost_table_for(isa);
        let why = format!("{isa} has one table, {}", p.display());
        return (p, why);
    }
    let features: Vec<&str> = halide_target.split('-').collect();
    let table = |name: &str| costs_dir().join(format!("{name}.csv"));
    for f in &features {
        if let Some(cpu) = f.strip_prefix("avx512_") {
            let llvm = match cpu {
                "zen4" => "znver4",
                "zen5" => "znver5",
                other => other,
            };
            let p = table(&format!("x86-{llvm}"));
            if p.exists() {
                return (p, format!("x86-{llvm}.csv: the target's `{f}` is the {llvm} microarchitecture"));
            }
            return (table(X86_AVX512_TABLE), format!("{X86_AVX512_TABLE}.csv (fallback): no table for `{f}` (x86-{llvm}.csv); an AVX-512 target without its own table uses Zen 4's, the only one with AVX-512 rows"));
        }
    }
    if features.iter().any(|f| f.starts_with("avx512")) {
        return (table(X86_AVX512_TABLE), format!("{X86_AVX512_TABLE}.csv (fallback): the target has AVX-512 but names no CPU (`avx512_<cpu>`); Zen 4's is the only table with AVX-512 rows"));
    }
    (table(X86_AVX2_TABLE), format!("{X86_AVX2_TABLE}.csv (fallback): the target names no AVX-512 CPU; the AVX2 table, measured on an AVX2 AMD EPYC (Zen 3)"))
}

impl CostModel {
    /// Costs for the specs of `x86`: measured rows of `csv` (columns
    /// `intrinsic` and `rthroughput`, as `misaal isa measure` writes them)
    /// where present, else each spec's cost line.
    pub fn load(x86: &SpecLibrary, csv: Option<&std::path::Path>) -> CostModel {
        let mut table = HashMap::new();
        for i in x86.instrs() {
            let c = match &i.cost {
                Some(c) if c.throughput > 0.0 => (c.throughput, CostSource::SpecLine),
                Some(c) if c.latency > 0.0 => (c.latency, CostSource::SpecLine),
                _ => (1.0, CostSource::Default),
            };
            table.insert(i.name.clone(), c);
        }
        let mut measured_table = false;
        if let Some(text) = csv.and_then(|p| std::fs::read_to_string(p).ok()) {
            let mut lines = text.lines();
            let head: Vec<&str> = lines.next().unwrap_or("").split(',').map(str::trim).collect();
            let col = |n: &str| head.iter().position(|h| *h == n);
            if let (Some(ci), Some(ct)) = (col("intrinsic"), col("rthroughput")) {
                measured_table = true;
                for l in lines {
                    let f: Vec<&str> = l.split(',').map(str::trim).collect();
                    if let (Some(n), Some(Ok(t))) = (f.get(ci), f.get(ct).map(|t| t.parse::<f64>())) {
                        table.insert(n.to_string(), (t, CostSource::Measured));
                    }
                }
            }
        }
        // A zmm form costs at most its ymm form twice over: Zen 4 runs a
        // 512-bit op as two 256-bit halves, and AVX-512 CPUs with 512-bit
        // units are faster still. The Zen 4 table has three rows far above
        // that (vpavgb, vpavgw, vpmulhuw zmm: 24 uops and 6 cycles against
        // 1 uop and 0.25 at ymm, while vpmulhw zmm is 1 cycle), which reads
        // as the measure harness timing a generic lowering rather than the
        // instruction. Taken as measured, they kept every 512-bit u16
        // division and rounding average in ymm halves.
        let mut capped = Vec::new();
        if measured_table {
            let names: Vec<String> = table.keys().filter(|n| n.starts_with("_mm512_")).cloned().collect();
            for n in names {
                let twin = format!("_mm256_{}", &n["_mm512_".len()..]);
                if let (Some(&(wide, CostSource::Measured)), Some(&(half, CostSource::Measured))) = (table.get(&n), table.get(&twin))
                    && wide > 2.0 * half * ZMM_OVER_YMM_SLACK
                {
                    table.insert(n.clone(), (2.0 * half, CostSource::Measured));
                    capped.push(format!("{n} {wide:.3} -> {:.3}", 2.0 * half));
                }
            }
            capped.sort();
        }
        let choice = match csv {
            Some(p) if measured_table && !capped.is_empty() => format!("{}; zmm rows above twice their ymm twin taken at twice it: {}", p.display(), capped.join(", ")),
            Some(p) if measured_table => p.display().to_string(),
            Some(p) => format!("no measured table at {} (spec cost lines)", p.display()),
            None => "spec cost lines".into(),
        };
        CostModel { table, naive: 50.0, measured_table, choice, dispatch: 0.0 }
    }

    /// [`load`](Self::load) with the table of a Halide target's
    /// microarchitecture ([`cost_table_for_target`]); `choice` says which and why.
    pub fn for_halide_target(instrs: &SpecLibrary, isa: &str, halide_target: &str) -> CostModel {
        let (path, why) = cost_table_for_target(isa, halide_target);
        let mut m = CostModel::load(instrs, Some(&path));
        if isa == "x86" {
            m.dispatch = X86_DISPATCH_COST;
        }
        m.choice = if m.measured_table { format!("{} ({why})", m.choice) } else { format!("{}: spec cost lines ({why})", m.choice) };
        m
    }

    pub fn instr(&self, name: &str) -> (f64, CostSource) {
        self.table.get(name).copied().unwrap_or((1.0, CostSource::Default))
    }

    /// A node's cost: glue is free (through memory, [`MEM_GLUE_COST`]), a
    /// Halide op is a naive fallback.
    pub fn gnode(&self, n: &GNode) -> f64 {
        if n.mem {
            MEM_GLUE_COST
        } else if n.glue {
            0.0
        } else {
            self.node(&n.op)
        }
    }

    pub fn node(&self, op: &Op) -> f64 {
        match op {
            Op::Instr { name } => self.instr(name).0 + self.dispatch,
            // A per-lane loop, half its price per op and half per lane: at
            // one price per op a 48-lane op was cheaper naive than the 24
            // instructions of its six 8-lane pieces, and at a price per lane
            // alone, four naive quarters tied with the whole.
            Op::Halide { generics, .. } => {
                let lanes = generics.get(2).copied().unwrap_or(1) as f64;
                (self.naive / 2.0 * (1.0 + lanes / NAIVE_LANES)).max(self.naive)
            }
            Op::Leaf { .. } | Op::Const { .. } => 0.0,
        }
    }
}

/// The cost of a scalar Halide op (see `isel::scalar_op`) at `one` per C
/// operation: a cast that keeps or narrows the width (a register's low
/// part, or the same bits read as the other signedness) is no instruction,
/// so it is free; anything else is one operation. A zero-extension of a
/// value cast from i16 to u16 (the broadcast dword of conv_nn's vpmaddwd)
/// is then one `movzwl`, as gcc emits it, not three operations.
pub fn scalar_op_cost(op: &Op, one: f64) -> f64 {
    match op {
        Op::Halide { name, generics } if name == "cast" && generics.len() == 5 && generics[4] <= generics[1] => 0.0,
        Op::Halide { name, .. } if name == "reinterpret" => 0.0,
        _ => one,
    }
}

/// A chosen node per class (`None`: the class cannot be extracted).
#[derive(Clone, Debug)]
pub struct Extraction {
    pub choice: Vec<Option<usize>>,
}

#[derive(Clone)]
struct Best {
    node: usize,
    cost: f64,
    /// The classes of the sub-DAG and the cost of each one's node.
    set: Rc<BTreeMap<usize, f64>>,
}

/// Whether a sub-DAG costing `total` beats a class's best so far.
fn improves(best: &Option<Best>, total: f64) -> bool {
    best.as_ref().is_none_or(|b| total < b.cost - 1e-9)
}

/// Greedy DAG extraction: each class takes the node whose sub-DAG (children's
/// sub-DAGs merged, a class counted once) is cheapest; repeated to a fixpoint.
pub fn greedy_dag(g: &Graph, cost: &dyn Fn(&GNode) -> f64) -> Extraction {
    let costs: Vec<f64> = g.nodes.iter().map(|n| cost(n)).collect();
    let mut best: Vec<Option<Best>> = vec![None; g.classes];
    // A node's sub-DAG depends only on its kids' bests: `seen[i]` is the
    // tick at which node i's was last computed, with its total (None: a
    // cycle), and `moved[c]` the tick at which class c's best last changed.
    // A node none of whose kids moved since has the same total, so a pass
    // compares that instead of merging the kids' sets again; the choices
    // are the ones the full merge makes.
    let (mut tick, mut moved) = (0u64, vec![0u64; g.classes]);
    let mut seen: Vec<Option<(u64, Option<f64>)>> = vec![None; g.nodes.len()];
    let mut changed = true;
    let mut passes = 0;
    while changed && passes < 10 * g.classes.max(1) {
        changed = false;
        passes += 1;
        for (i, n) in g.nodes.iter().enumerate() {
            if let Some((at, total)) = seen[i]
                && n.kids.iter().all(|&k| moved[k] <= at)
            {
                if !total.is_some_and(|t| improves(&best[n.class], t)) {
                    continue;
                }
            }
            let Some(kids) = n.kids.iter().map(|&k| best[k].as_ref()).collect::<Option<Vec<&Best>>>() else { continue };
            tick += 1;
            if kids.iter().any(|b| b.set.contains_key(&n.class)) {
                seen[i] = Some((tick, None));
                continue; // would be a cycle
            }
            let mut set: BTreeMap<usize, f64> = match kids.iter().max_by_key(|b| b.set.len()) {
                Some(b) => (*b.set).clone(),
                None => BTreeMap::new(),
            };
            for b in &kids {
                for (c, x) in b.set.iter() {
                    set.entry(*c).or_insert(*x);
                }
            }
            set.insert(n.class, costs[i]);
            let total: f64 = set.values().sum();
            seen[i] = Some((tick, Some(total)));
            if improves(&best[n.class], total) {
                best[n.class] = Some(Best { node: i, cost: total, set: Rc::new(set) });
                tick += 1;
                moved[n.class] = tick;
                changed = true;
            }
        }
    }
    Extraction { choice: best.into_iter().map(|b| b.map(|b| b.node)).collect() }
}

/// The cost of the DAG that `choice` picks under `roots` (each class once),
/// or `None` on a missing choice or a cycle. `stamp`/`epoch` mark the visited
/// classes without clearing a vector per call (`stamp[c] == epoch`: done,
/// `epoch + 1`: open).
fn choice_cost(g: &Graph, roots: &[usize], choice: &[Option<usize>], costs: &[f64], stamp: &mut [u64], epoch: &mut u64) -> Option<f64> {
    *epoch += 2;
    let (done, open) = (*epoch, *epoch + 1);
    let mut total = 0.0;
    // Iterative DFS: (class, next kid index).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for &r in roots {
        if stamp[r] == done {
            continue;
        }
        if stamp[r] == open {
            return None;
        }
        stamp[r] = open;
        stack.push((r, 0));
        while let Some(&(c, k)) = stack.last() {
            let n = choice[c]?;
            if let Some(&kid) = g.nodes[n].kids.get(k) {
                stack.last_mut().expect("non-empty").1 += 1;
                if stamp[kid] == done {
                    continue;
                }
                if stamp[kid] == open {
                    return None;
                }
                stamp[kid] = open;
                stack.push((kid, 0));
            } else {
                stamp[c] = done;
                total += costs[n];
                stack.pop();
            }
        }
    }
    Some(total)
}

/// Passes of [`improve_shared`] at most.
pub const SHARE_PASSES: usize = 8;

/// The least share of the DAG's cost a switch of [`improve_shared`] must
/// save: the table's rows are measured to a few percent and the model
/// sees no ports, so a predicted gain below that is noise, and the code
/// greedy extraction chose stays.
pub const SHARE_MIN_GAIN: f64 = 0.03;

/// Improves a DAG extraction where values are shared across siblings, a
/// case greedy DAG extraction cannot see: each class takes its cheapest
/// sub-DAG alone, so the two halves of a wide value (each a slice of one
/// wide register, or a narrow computation of its own) each take the narrow
/// computation, since each alone is cheaper than the whole wide one, while
/// both together cost more than the wide value once and its two slices.
///
/// A local search over the choice under `roots`. Its candidates are the
/// classes `x` that a node of the chosen DAG could use instead of its
/// chosen one; they are grouped by the op their own choice is (the same
/// value, a 512-bit sum say, computed for each of a kernel's rows). A move
/// takes one group: every class of the DAG with a node over one of its
/// classes switches to that node at once (the rest keep their choice), so
/// that what the wide values bring in (their broadcasts) is paid once for
/// all of them. A move is kept if the whole DAG then costs at least
/// [`SHARE_MIN_GAIN`] less. The best move of each pass is taken, to a
/// fixpoint (at most [`SHARE_PASSES`]). Never worse than `start`.
pub fn improve_shared(g: &Graph, roots: &[usize], cost: &dyn Fn(&GNode) -> f64, start: Extraction) -> Extraction {
    let costs: Vec<f64> = g.nodes.iter().map(|n| cost(n)).collect();
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); g.classes];
    // users[x]: the nodes with x among their kids.
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); g.classes];
    for (i, n) in g.nodes.iter().enumerate() {
        by_class[n.class].push(i);
        for (j, &k) in n.kids.iter().enumerate() {
            if !n.kids[..j].contains(&k) {
                users[k].push(i);
            }
        }
    }
    let mut stamp = vec![0u64; g.classes];
    let mut epoch = 0u64;
    let mut choice = start.choice;
    let Some(mut cur) = choice_cost(g, roots, &choice, &costs, &mut stamp, &mut epoch) else { return Extraction { choice } };
    for _ in 0..SHARE_PASSES {
        let Ok(reach) = (Extraction { choice: choice.clone() }).reachable(g, roots) else { break };
        let mut in_dag = vec![false; g.classes];
        for &n in &reach {
            in_dag[g.nodes[n].class] = true;
        }
        // Candidates: the kids of unchosen nodes of the DAG's classes.
        let mut candidates: Vec<usize> = Vec::new();
        let mut seen = vec![false; g.classes];
        for &n in &reach {
            let c = g.nodes[n].class;
            for &m in &by_class[c] {
                if m == n {
                    continue;
                }
                for &k in &g.nodes[m].kids {
                    if !seen[k] && choice[k].is_some() {
                        seen[k] = true;
                        candidates.push(k);
                    }
                }
            }
        }
        // Moves: the candidates whose chosen node is the same op. (A
        // candidate alone was tried, and found to pay off rarely and by
        // little, at a hundred times the search.)
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for &x in &candidates {
            if let Some(n) = choice[x] {
                groups.entry(g.nodes[n].op.to_string()).or_default().push(x);
            }
        }
        let moves: Vec<Vec<usize>> = groups.into_values().filter(|v| v.len() > 1).collect();
        let mut best: Option<(f64, Vec<(usize, usize)>)> = None;
        for xs in &moves {
            // Each DAG class with a user of the group switches to its cheapest one.
            let mut switch: Vec<(usize, usize)> = Vec::new();
            for &x in xs {
                for &u in &users[x] {
                    let c = g.nodes[u].class;
                    if !in_dag[c] || choice[c] == Some(u) || g.nodes[u].kids.iter().any(|&k| choice[k].is_none() || k == c) {
                        continue;
                    }
                    match switch.iter_mut().find(|(cc, _)| *cc == c) {
                        Some(s) if costs[u] < costs[s.1] => s.1 = u,
                        Some(_) => {}
                        None => switch.push((c, u)),
                    }
                }
            }
            // A switch of one class alone is what greedy extraction
            // already weighed; only a switch of several can share.
            if switch.len() < 2 {
                continue;
            }
            let old: Vec<Option<usize>> = switch.iter().map(|&(c, _)| choice[c]).collect();
            for &(c, u) in &switch {
                choice[c] = Some(u);
            }
            let trial = choice_cost(g, roots, &choice, &costs, &mut stamp, &mut epoch);
            for (&(c, _), o) in switch.iter().zip(old) {
                choice[c] = o;
            }
            if let Some(t) = trial
                && t < cur * (1.0 - SHARE_MIN_GAIN)
                && best.as_ref().is_none_or(|b| t < b.0 - 1e-9)
            {
                best = Some((t, switch));
            }
        }
        let Some((t, switch)) = best else { break };
        for (c, u) in switch {
            choice[c] = Some(u);
        }
        cur = t;
    }
    Extraction { choice }
}

/// DAG extraction as selection runs it: [`greedy_dag`], then improved by
/// [`improve_shared`] for the values shared across roots and halves.
pub fn extract_dag(g: &Graph, roots: &[usize], cost: &dyn Fn(&GNode) -> f64) -> Extraction {
    improve_shared(g, roots, cost, greedy_dag(g, cost))
}

/// Tree extraction, as egglog's own extractor does it: a class's cost is its
/// cheapest node's cost plus its children's, each child paid for each use.
pub fn tree(g: &Graph, cost: &dyn Fn(&GNode) -> f64) -> Extraction {
    let mut best: Vec<Option<(f64, usize)>> = vec![None; g.classes];
    let mut changed = true;
    while changed {
        changed = false;
        for (i, n) in g.nodes.iter().enumerate() {
            let Some(kc) = n.kids.iter().map(|&k| best[k].map(|b| b.0)).sum::<Option<f64>>() else { continue };
            let total = cost(n) + kc;
            if best[n.class].is_none_or(|b| total < b.0 - 1e-9) {
                best[n.class] = Some((total, i));
                changed = true;
            }
        }
    }
    Extraction { choice: best.into_iter().map(|b| b.map(|b| b.1)).collect() }
}

impl Extraction {
    /// The chosen nodes under `roots`, each once, children before parents.
    /// `Err` names a class with no choice (or a cycle of choices).
    pub fn reachable(&self, g: &Graph, roots: &[usize]) -> Result<Vec<usize>, String> {
        let mut state = vec![0u8; g.classes]; // 0 new, 1 open, 2 done
        let mut out = Vec::new();
        fn go(x: &Extraction, g: &Graph, c: usize, state: &mut [u8], out: &mut Vec<usize>) -> Result<(), String> {
            match state[c] {
                2 => return Ok(()),
                1 => return Err(format!("class {c} is on a cycle of chosen nodes")),
                _ => {}
            }
            state[c] = 1;
            let n = x.choice[c].ok_or_else(|| format!("class {c} has no extractable node"))?;
            for &k in &g.nodes[n].kids {
                go(x, g, k, state, out)?;
            }
            state[c] = 2;
            out.push(n);
            Ok(())
        }
        for &r in roots {
            go(self, g, r, &mut state, &mut out)?;
        }
        Ok(out)
    }

    /// Cost of the chosen DAG under `roots`: each distinct node once.
    pub fn dag_cost(&self, g: &Graph, roots: &[usize], cost: &dyn Fn(&GNode) -> f64) -> Result<f64, String> {
        Ok(self.reachable(g, roots)?.iter().map(|&n| cost(&g.nodes[n])).sum())
    }

    /// Cost of the chosen terms under `roots` as trees: a node once per use.
    pub fn tree_cost(&self, g: &Graph, roots: &[usize], cost: &dyn Fn(&GNode) -> f64) -> Result<f64, String> {
        self.reachable(g, roots)?;
        let mut memo: HashMap<usize, f64> = HashMap::new();
        fn go(x: &Extraction, g: &Graph, c: usize, cost: &dyn Fn(&GNode) -> f64, memo: &mut HashMap<usize, f64>) -> f64 {
            if let Some(v) = memo.get(&c) {
                return *v;
            }
            let n = &g.nodes[x.choice[c].expect("reachable")];
            let v = cost(n) + n.kids.iter().map(|&k| go(x, g, k, cost, memo)).sum::<f64>();
            memo.insert(c, v);
            v
        }
        Ok(roots.iter().map(|&r| go(self, g, r, cost, &mut memo)).sum())
    }

    /// The chosen term of `class`, as an S-expression; a naive Halide op
    /// prints as `naive:op<...>`.
    pub fn render(&self, g: &Graph, class: usize) -> String {
        fn go(x: &Extraction, g: &Graph, c: usize, depth: usize) -> String {
            let Some(n) = x.choice.get(c).copied().flatten() else { return format!("<unextractable class {c}>") };
            if depth > 64 {
                return "...".into();
            }
            let n = &g.nodes[n];
            let head = match &n.op {
                Op::Halide { .. } => format!("naive:{}", n.op),
                Op::Leaf { text, .. } => return format!("{{{text}}}"),
                Op::Const { value, .. } => return value.to_string(),
                Op::Instr { name } => name.clone(),
            };
            let kids: Vec<String> = n.kids.iter().map(|&k| go(x, g, k, depth + 1)).collect();
            if kids.is_empty() { format!("({head})") } else { format!("({head} {})", kids.join(" ")) }
        }
        go(self, g, class, 0)
    }
}

/// Exact DAG extraction by branch and bound, for small e-graphs: the
/// cheapest acyclic choice of one node per class needed by `roots`, where a
/// class costs once however often it is used. The search starts from
/// `start`'s choice (say, the greedy one) as the bound, so the result is
/// never worse; it gives up (`None`) after `budget` search steps.
pub fn exact_dag(g: &Graph, roots: &[usize], cost: &dyn Fn(&GNode) -> f64, start: &Extraction, budget: usize) -> Option<Extraction> {
    let costs: Vec<f64> = g.nodes.iter().map(|n| cost(n)).collect();
    let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); g.classes];
    for (i, n) in g.nodes.iter().enumerate() {
        by_class[n.class].push(i);
    }
    for v in &mut by_class {
        v.sort_by(|a, b| costs[*a].total_cmp(&costs[*b]));
    }
    let mut best = (start.dag_cost(g, roots, cost).ok()?, start.choice.clone());
    struct S<'a> {
        g: &'a Graph,
        roots: &'a [usize],
        costs: &'a [f64],
        by_class: &'a [Vec<usize>],
        steps: usize,
        budget: usize,
    }
    fn go(s: &mut S, choice: &mut Vec<Option<usize>>, pending: Vec<usize>, cur: f64, best: &mut (f64, Vec<Option<usize>>)) -> bool {
        s.steps += 1;
        if s.steps > s.budget {
            return false;
        }
        let mut pending = pending;
        let c = loop {
            match pending.pop() {
                Some(c) if choice[c].is_some() => continue,
                Some(c) => break Some(c),
                None => break None,
            }
        };
        let Some(c) = c else {
            let x = Extraction { choice: choice.clone() };
            if cur < best.0 - 1e-9 && x.reachable(s.g, s.roots).is_ok() {
                *best = (cur, choice.clone());
            }
            return true;
        };
        let (by_class, costs, g) = (s.by_class, s.costs, s.g);
        for &n in &by_class[c] {
            if cur + costs[n] >= best.0 - 1e-9 {
                break; // sorted by cost: no cheaper node follows
            }
            choice[c] = Some(n);
            let mut next = pending.clone();
            next.extend(g.nodes[n].kids.iter().copied().filter(|&k| choice[k].is_none()));
            let finished = go(s, choice, next, cur + costs[n], best);
            choice[c] = None;
            if !finished {
                return false;
            }
        }
        true
    }
    let mut s = S { g, roots, costs: &costs, by_class: &by_class, steps: 0, budget };
    let mut choice = vec![None; g.classes];
    if !go(&mut s, &mut choice, roots.to_vec(), 0.0, &mut best) {
        return None;
    }
    // Classes outside the roots' DAG keep the starting choice.
    let mut out = start.choice.clone();
    let chosen = Extraction { choice: best.1 };
    for n in chosen.reachable(g, roots).ok()? {
        out[g.nodes[n].class] = Some(n);
    }
    Some(Extraction { choice: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn halide(name: &str, generics: &[i64]) -> Op {
        Op::Halide { name: name.into(), generics: generics.to_vec() }
    }

    /// [`greedy_dag`] as it was before it kept each node's total: every
    /// node's kids' sets merged again on every pass.
    fn greedy_dag_merging_every_pass(g: &Graph, cost: &dyn Fn(&GNode) -> f64) -> Extraction {
        let costs: Vec<f64> = g.nodes.iter().map(|n| cost(n)).collect();
        let mut best: Vec<Option<Best>> = vec![None; g.classes];
        let mut changed = true;
        let mut passes = 0;
        while changed && passes < 10 * g.classes.max(1) {
            changed = false;
            passes += 1;
            for (i, n) in g.nodes.iter().enumerate() {
                let Some(kids) = n.kids.iter().map(|&k| best[k].as_ref()).collect::<Option<Vec<&Best>>>() else { continue };
                if kids.iter().any(|b| b.set.contains_key(&n.class)) {
                    continue;
                }
                let mut set: BTreeMap<usize, f64> = match kids.iter().max_by_key(|b| b.set.len()) {
                    Some(b) => (*b.set).clone(),
                    None => BTreeMap::new(),
                };
                for b in &kids {
                    for (c, x) in b.set.iter() {
                        set.entry(*c).or_insert(*x);
                    }
                }
                set.insert(n.class, costs[i]);
                let total: f64 = set.values().sum();
                if best[n.class].as_ref().is_none_or(|b| total < b.cost - 1e-9) {
                    best[n.class] = Some(Best { node: i, cost: total, set: Rc::new(set) });
                    changed = true;
                }
            }
        }
        Extraction { choice: best.into_iter().map(|b| b.map(|b| b.node)).collect() }
    }

    #[test]
    fn a_naive_op_costs_more_with_more_lanes_but_less_than_its_pieces() {
        let costs = CostModel { table: HashMap::new(), naive: 50.0, measured_table: false, choice: String::new(), dispatch: 0.0 };
        let at = |n: i64| costs.node(&halide("saturating_add", &[1, 32, n]));
        assert_eq!(at(4), 50.0);
        assert_eq!(at(8), 50.0);
        assert!(at(48) > 3.0 * at(8), "{}", at(48));
        // A whole lane loop is cheaper than its halves or quarters.
        assert!(at(64) < 2.0 * at(32) && at(128) < 4.0 * at(32));
    }

    #[test]
    fn greedy_dag_chooses_what_merging_every_pass_chooses() {
        // Pseudo-random e-graphs with shared kids, cycles, and nodes listed
        // before their kids, so that the fixpoint takes several passes.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        let mut chosen = 0;
        for round in 0..300 {
            let classes = 2 + next(30);
            let mut g = Graph::new();
            for _ in 0..classes {
                g.add_class();
            }
            for _ in 0..classes + next(3 * classes) {
                let class = next(classes);
                let kids = (0..next(4)).map(|_| next(classes)).collect();
                g.add_node(halide(&format!("op{}", next(6)), &[]), class, kids);
            }
            let cost = |n: &GNode| match &n.op {
                Op::Halide { name, .. } => 1.0 + name[2..].parse::<f64>().unwrap() * 0.75,
                _ => 1.0,
            };
            let ours = greedy_dag(&g, &cost);
            assert_eq!(ours.choice, greedy_dag_merging_every_pass(&g, &cost).choice, "round {round}");
            chosen += ours.choice.iter().filter(|c| c.is_some()).count();
        }
        assert!(chosen > 1000, "the graphs must have extractions to compare ({chosen})");
    }

    #[test]
    fn improve_shared_switches_both_halves_of_every_row() {
        // Two rows; each root packs a low and a high half. A half is either
        // its own narrow op over a narrow broadcast, or an extract of the
        // row's wide value over a wide broadcast. Alone a half is cheaper
        // narrow (2.5 + 4 < 0.5 + 3 + 4), so greedy takes narrow; all
        // halves of both rows sharing the wide broadcast cost 14 < 16.
        let instr = |n: &str| Op::Instr { name: n.into() };
        let mut g = Graph::new();
        let (wide_b, narrow_b) = (g.add_class(), g.add_class());
        g.add_node(instr("bcast_wide"), wide_b, vec![]);
        g.add_node(instr("bcast_narrow"), narrow_b, vec![]);
        let mut roots = Vec::new();
        for _ in 0..2 {
            let w = g.add_class();
            g.add_node(instr("wide"), w, vec![wide_b]);
            let (lo, hi) = (g.add_class(), g.add_class());
            for h in [lo, hi] {
                g.add_node(instr("narrow"), h, vec![narrow_b]);
                g.add_node(instr("extract"), h, vec![w]);
            }
            let r = g.add_class();
            g.add_node(instr("pack"), r, vec![lo, hi]);
            roots.push(r);
        }
        let cost = |n: &GNode| match &n.op {
            Op::Instr { name } => match name.as_str() {
                "bcast_wide" | "bcast_narrow" => 4.0,
                "wide" => 3.0,
                "narrow" => 2.5,
                "extract" => 0.5,
                _ => 1.0,
            },
            _ => 0.0,
        };
        let greedy = greedy_dag(&g, &cost);
        assert_eq!(greedy.dag_cost(&g, &roots, &cost), Ok(16.0));
        let better = extract_dag(&g, &roots, &cost);
        assert_eq!(better.dag_cost(&g, &roots, &cost), Ok(14.0));
        assert!(better.reachable(&g, &roots).unwrap().iter().all(|&n| !matches!(&g.nodes[n].op, Op::Instr { name } if name.contains("narrow"))));
    }

    #[test]
    fn odd_lane_pads_are_glue_through_memory_on_every_target() {
        // A 24-lane u16 vector padded to 32 with its own first 8 lanes, and
        // the 24 lanes taken back: no register holds 24 or 8 of them alone.
        let pad = halide("concat", &[0, 16, 24, 8]);
        let first = halide("slice", &[0, 16, 8, 24, 0, 1]);
        let back = halide("slice", &[0, 16, 24, 32, 0, 1]);
        for op in [&pad, &first, &back] {
            assert_eq!(odd_lanes_glue(op), Some(Glue::Mem), "{op:?}");
        }
        // Powers of two are the other kinds' business; bools and strided slices are no glue.
        assert_eq!(odd_lanes_glue(&halide("concat", &[0, 8, 16, 16])), None);
        assert_eq!(odd_lanes_glue(&halide("slice", &[0, 8, 16, 32, 16, 1])), None);
        assert_eq!(odd_lanes_glue(&halide("concat", &[0, 1, 24, 8])), None);
        assert_eq!(odd_lanes_glue(&halide("slice", &[0, 8, 8, 24, 0, 3])), None);
        let mut g = Graph::new();
        let (c0, c1, c2, c3) = (g.add_class(), g.add_class(), g.add_class(), g.add_class());
        g.add_node(Op::Leaf { text: "a[ramp(0, 1, 24)]".into(), bits: 384 }, c0, vec![]);
        g.add_node(first, c1, vec![c0]);
        g.add_node(pad, c2, vec![c0, c1]);
        g.add_node(back, c3, vec![c2]);
        g.mark_glue(256, false, 128);
        // The pad and the slice back copy bytes; the 128-bit first lanes of
        // a load are read from it, as any half of a load is.
        assert!(g.nodes[2..].iter().all(|n| n.glue && n.mem));
        assert!(g.nodes[1].glue && !g.nodes[1].mem);
    }

    #[test]
    fn sub_register_glue_is_below_the_narrowest_register() {
        // u8x64 halves of an HVX register, and the low u8x64 of one.
        let cat = halide("concat", &[0, 8, 64, 64]);
        let lo = halide("slice", &[0, 8, 64, 128, 0, 1]);
        assert_eq!(sub_register_glue(&cat, 1024), Some(Glue::Mem));
        assert_eq!(sub_register_glue(&lo, 1024), Some(Glue::Mem));
        // Whole registers are the free kind; strided slices and bools are not glue.
        assert_eq!(sub_register_glue(&halide("concat", &[0, 8, 128, 128]), 1024), None);
        assert_eq!(sub_register_glue(&halide("slice", &[0, 8, 64, 128, 0, 2]), 1024), None);
        assert_eq!(sub_register_glue(&halide("concat", &[0, 1, 64, 64]), 1024), None);
        let mut g = Graph::new();
        let (c0, c1, c2) = (g.add_class(), g.add_class(), g.add_class());
        g.add_node(Op::Instr { name: "Q6_Vub_vmax_VubVub".into() }, c0, vec![]);
        g.add_node(lo.clone(), c1, vec![c0]);
        g.add_node(cat.clone(), c2, vec![c1, c1]);
        let mut x86 = g.clone();
        x86.mark_glue(1024, false, 128);
        assert!(x86.nodes.iter().all(|n| !n.glue && !n.mem), "without sub_register, 512 bits are no glue");
        // x86: a u8x8 is narrower than an xmm, so its doubling is glue.
        let mut small = Graph::new();
        let (d0, d1, d2) = (small.add_class(), small.add_class(), small.add_class());
        small.add_node(Op::Instr { name: "_mm_add_epi8".into() }, d0, vec![]);
        small.add_node(halide("slice", &[0, 8, 8, 16, 0, 1]), d1, vec![d0]);
        small.add_node(halide("concat", &[0, 8, 8, 8]), d2, vec![d1, d1]);
        small.mark_glue(256, false, 128);
        assert!(small.nodes[1].glue && small.nodes[1].mem && small.nodes[2].glue && small.nodes[2].mem);
        g.mark_glue(1024, true, 1024);
        assert!(g.nodes[1].glue && g.nodes[1].mem && g.nodes[2].glue && g.nodes[2].mem);
        let costs = CostModel { table: HashMap::new(), naive: 50.0, measured_table: false, choice: String::new(), dispatch: 0.0 };
        assert_eq!(costs.gnode(&g.nodes[2]), MEM_GLUE_COST);
    }
}
