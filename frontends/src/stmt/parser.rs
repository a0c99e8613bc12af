//! Recursive-descent parser with type inference as it goes.
//!
//! Names are scoped as in Halide: `let`, `for` and `allocate` bind over the
//! rest of their block. Every expression is typed when it is built (rules in
//! `infer`), so a type error points at the text that caused it. Buffers
//! that no `allocate` in scope types (function arguments, and buffers a
//! parallel-loop closure reaches through a pointer) take their element type,
//! first found first, from:
//!
//! 1. a scan of the whole file for `NAME.type == (uint32)CODE` checks, the
//!    type code and bits of a bounds query's `_halide_buffer_init(NAME.buffer,
//!    ...)`, and `allocate NAME[TYPE ...]` lines;
//! 2. [`ParseOptions::buffer_types`] (`misaal compile --buffer-type`);
//! 3. the Stmt's use of the buffer: the value stored to it, a load printed
//!    with its type, `(uint8x64)NAME[...]`, or a load whose type its context
//!    fixes: an operand of a binary operator, `min`, `max` or `select` whose
//!    other operand is typed, an argument of an intrinsic printed with its
//!    type whose rule gives the argument's type from the result's
//!    (`(uint16x64)widening_add(NAME[...], ...)` makes NAME uint8), the
//!    operand of a typed `vector_reduce_*`, a value stored to a typed buffer.
//!
//! A Stmt printed with `no_asserts` has no `.type` checks, and with
//! `no_bounds_query` no `_halide_buffer_init` either, so an input buffer is
//! typed by (2) or (3) or not at all. As (3) may come after a load of the
//! same buffer, types are found first by discovery passes: there a load of a
//! buffer without a type is a placeholder, and a store learns its buffer's
//! type only from a value no placeholder reached (through `let`s too). Passes
//! repeat while they learn; a last, strict pass then reports a buffer still
//! without a type by its name and line.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use misaal_isa::Diagnostic;
use misaal_isa::diag::Span;

use super::ast::*;
use super::infer;
use super::lexer::{Tok, Token};
use super::types::{Type, round_float};

mod older;

/// Deepest nesting of expressions and blocks accepted; deeper input is an
/// error rather than a stack overflow.
const MAX_DEPTH: u32 = 200;
/// Binary operators on one path of an expression tree. A chain `a + b + ..`
/// parses in a loop, but its tree is as deep as it is long, and printing,
/// dropping and the backends recurse on that depth.
const MAX_CHAIN: u32 = 1000;

type PResult<T> = Result<T, Diagnostic>;

/// What a parse is told besides the text.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Element types of buffers, by name, for those the Stmt does not type
    /// (`--buffer-type NAME=TYPE`). Where the Stmt also gives one, the two
    /// must agree.
    pub buffer_types: Vec<(String, Type)>,
}

/// Reads a `NAME=TYPE` buffer type as `--buffer-type` takes it, e.g.
/// `input=uint8`; TYPE is a scalar Halide type word.
pub fn buffer_type_arg(s: &str) -> Result<(String, Type), String> {
    let (name, word) = s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME=TYPE (e.g. input=uint8)"))?;
    let (name, word) = (name.trim(), word.trim());
    if name.is_empty() {
        return Err(format!("`{s}` names no buffer"));
    }
    match Type::from_word(word) {
        Some(t) if t.is_scalar() => Ok((name.to_string(), t)),
        _ => Err(format!("`{word}` is not a scalar Halide type such as uint8, int16 or float32")),
    }
}

pub fn parse(file: &str, toks: Vec<Token>) -> PResult<Module> {
    parse_with(file, toks, &ParseOptions::default())
}

pub fn parse_with(file: &str, toks: Vec<Token>, opts: &ParseOptions) -> PResult<Module> {
    let scan = Scan::new(&toks);
    let mut given = HashMap::new();
    for (name, t) in &opts.buffer_types {
        let t = t.element();
        if let Some((stated, span, how)) = scan.stated(name)
            && stated != t
        {
            return Err(Diagnostic::new(file, span, format!("--buffer-type {name}={t}, but {how} at line {} makes `{name}` {stated}", span.line)));
        }
        if given.insert(name.clone(), t).is_some_and(|old| old != t) {
            return Err(Diagnostic::new(file, Span { line: 1, col: 1 }, format!("--buffer-type gives `{name}` two types")));
        }
    }
    let parser = |learned: &HashMap<String, Type>, discovery: bool, missing: Vec<(String, Span)>| Parser {
        file,
        toks: toks.clone(),
        pos: 0,
        depth: 0,
        chain: 0,
        scan: scan.clone(),
        given: given.clone(),
        learned: learned.clone(),
        discovery,
        placeholders: 0,
        tainted: HashSet::new(),
        aliases: HashMap::new(),
        missing,
        used: HashSet::new(),
        scope: Scope::default(),
        func: FuncInfo::default(),
    };
    let finish = |p: &Parser, m: Module| -> PResult<Module> {
        let mut unused: Vec<&String> = given.keys().filter(|n| !p.used.contains(*n)).collect();
        unused.sort();
        match unused.first() {
            Some(n) => Err(Diagnostic::new(file, Span { line: 1, col: 1 }, format!("--buffer-type names `{n}`, but no buffer of the Stmt is called that"))),
            None => Ok(m),
        }
    };
    let mut learned = HashMap::new();
    let missing = loop {
        let mut p = parser(&learned, true, vec![]);
        let r = p.module();
        if p.placeholders == 0 {
            // Every buffer had its type: this was a strict parse.
            return r.and_then(|m| finish(&p, m));
        }
        if p.learned.len() == learned.len() {
            break p.missing;
        }
        learned = p.learned;
    };
    let mut p = parser(&learned, false, missing);
    let m = p.module()?;
    finish(&p, m)
}

/// Facts gathered from the whole token stream before parsing.
#[derive(Clone, Default)]
struct Scan {
    /// Element types from `NAME.type == (uint32)CODE`.
    checked_types: HashMap<String, (Type, Span)>,
    /// Element types (and dimensions) from a bounds query's
    /// `_halide_buffer_init(NAME.buffer, shape, host, device, interface,
    /// CODE, BITS, DIMS, ...)`.
    init_types: HashMap<String, (Type, Span)>,
    /// Element types from `allocate NAME[TYPE ...]`, anywhere in the file.
    allocated_types: HashMap<String, (Type, Span)>,
    /// From `NAME.dimensions == N`, or a bounds query's DIMS.
    dims: HashMap<String, u32>,
    /// One more than the largest K of any name `NAME.extent.K`,
    /// `NAME.min.K` or `NAME.stride.K`.
    extent_dims: HashMap<String, u32>,
}

impl Scan {
    fn new(toks: &[Token]) -> Self {
        let mut s = Scan::default();
        let ident = |i: usize| match toks.get(i).map(|t| &t.tok) {
            Some(Tok::Ident(n)) => Some(n.as_str()),
            _ => None,
        };
        let tok = |i: usize| toks.get(i).map(|t| &t.tok);
        for i in 0..toks.len() {
            let Some(name) = ident(i) else { continue };
            if let Some(buf) = name.strip_suffix(".type") {
                if let (Some(Tok::EqEq), Some(Tok::LParen), Some("uint32"), Some(Tok::RParen), Some(Tok::Int(code))) =
                    (tok(i + 1), tok(i + 2), ident(i + 3), tok(i + 4), tok(i + 5))
                    && let Some(t) = Type::from_buffer_code(*code)
                {
                    s.checked_types.entry(buf.to_string()).or_insert((t, toks[i].span));
                }
            } else if let Some(buf) = name.strip_suffix(".dimensions") {
                if let (Some(Tok::EqEq), Some(Tok::Int(n))) = (tok(i + 1), tok(i + 2)) {
                    s.dims.entry(buf.to_string()).or_insert(*n as u32);
                }
            } else if name == "allocate" {
                if let (Some(buf), Some(Tok::LBracket), Some(word)) = (ident(i + 1), tok(i + 2), ident(i + 3))
                    && let Some(t) = Type::from_word(word)
                {
                    s.allocated_types.entry(buf.to_string()).or_insert((t.element(), toks[i + 1].span));
                }
            } else if name == "_halide_buffer_init" {
                s.buffer_init(toks, i);
            } else if let Some((buf, k)) =
                name.rsplit_once(".extent.").or_else(|| name.rsplit_once(".min.")).or_else(|| name.rsplit_once(".stride."))
                && let Ok(k) = k.parse::<u32>()
            {
                let d = s.extent_dims.entry(buf.to_string()).or_insert(0);
                *d = (*d).max(k.saturating_add(1));
            }
        }
        s
    }

    /// `_halide_buffer_init(...)` at token `i`: records the type and
    /// dimensions of the buffer its first argument names, when the type code,
    /// bits and dimensions are literals.
    fn buffer_init(&mut self, toks: &[Token], i: usize) {
        if toks.get(i + 1).map(|t| &t.tok) != Some(&Tok::LParen) {
            return;
        }
        // The top-level arguments, as token ranges.
        let mut args: Vec<(usize, usize)> = Vec::new();
        let (mut depth, mut start) = (0usize, i + 2);
        for (k, t) in toks.iter().enumerate().skip(i + 1) {
            match t.tok {
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        args.push((start, k));
                        break;
                    }
                }
                Tok::Comma if depth == 1 => {
                    args.push((start, k));
                    start = k + 1;
                }
                Tok::Eof => return,
                _ => {}
            }
        }
        let Some(&(b0, b1)) = args.first() else { return };
        let Some(buf) = toks[b0..b1].iter().find_map(|t| match &t.tok {
            Tok::Ident(n) => n.strip_suffix(".buffer"),
            _ => None,
        }) else {
            return;
        };
        let int = |a: usize| match args.get(a) {
            Some(&(s, e)) if e == s + 1 => match toks[s].tok {
                Tok::Int(v) => Some(v),
                _ => None,
            },
            _ => None,
        };
        if let (Some(code), Some(bits), Some(dims)) = (int(5), int(6), int(7))
            && code < 4
            && bits < 256
            && let Some(t) = Type::from_buffer_code(code | bits << 8 | 1 << 16)
        {
            self.init_types.entry(buf.to_string()).or_insert((t, toks[i].span));
            if let Ok(d) = u32::try_from(dims) {
                self.dims.entry(buf.to_string()).or_insert(d);
            }
        }
    }

    /// The element type the file states for buffer `name` (not counting
    /// stores and loads), with where and how.
    fn stated(&self, name: &str) -> Option<(Type, Span, &'static str)> {
        let pick = |m: &HashMap<String, (Type, Span)>, how| m.get(name).map(|&(t, s)| (t, s, how));
        pick(&self.checked_types, "its `.type` check")
            .or_else(|| pick(&self.init_types, "its bounds query"))
            .or_else(|| pick(&self.allocated_types, "its allocation"))
    }
}

/// Names in scope: variables and allocations, innermost last.
#[derive(Default)]
struct Scope {
    vars: HashMap<String, Vec<Type>>,
    allocs: HashMap<String, Vec<Type>>,
}

impl Scope {
    fn push_var(&mut self, name: &str, t: Type) {
        self.vars.entry(name.to_string()).or_default().push(t);
    }
    fn pop_var(&mut self, name: &str) {
        if let Some(v) = self.vars.get_mut(name) {
            v.pop();
        }
    }
    fn var(&self, name: &str) -> Option<Type> {
        self.vars.get(name).and_then(|v| v.last()).copied()
    }
    fn push_alloc(&mut self, name: &str, t: Type) {
        self.allocs.entry(name.to_string()).or_default().push(t);
    }
    fn pop_alloc(&mut self, name: &str) {
        if let Some(v) = self.allocs.get_mut(name) {
            v.pop();
        }
    }
    fn alloc(&self, name: &str) -> Option<Type> {
        self.allocs.get(name).and_then(|v| v.last()).copied()
    }
}

/// What the current function's body says about its arguments.
#[derive(Default)]
struct FuncInfo {
    args: HashSet<String>,
    /// Free variables and the type they were used at, first use first.
    free: HashMap<String, (Type, Span)>,
}

/// A binder that scopes over the rest of its block.
enum Binder {
    Let { name: String, value: Expr },
    Allocate { name: String, ty: Type, extents: Vec<Expr>, memory: MemoryType, condition: Option<Expr> },
}

enum Item {
    Stmt(Stmt),
    Binder(Binder),
}

fn block(mut v: Vec<Stmt>) -> Stmt {
    if v.len() == 1 { v.pop().unwrap() } else { Stmt::Block(v) }
}

fn binop(t: &Tok) -> Option<(BinOp, u8)> {
    Some(match t {
        Tok::OrOr => (BinOp::Or, 1),
        Tok::AndAnd => (BinOp::And, 2),
        Tok::EqEq => (BinOp::Eq, 3),
        Tok::Ne => (BinOp::Ne, 3),
        Tok::Lt => (BinOp::Lt, 4),
        Tok::Le => (BinOp::Le, 4),
        Tok::Gt => (BinOp::Gt, 4),
        Tok::Ge => (BinOp::Ge, 4),
        Tok::Plus => (BinOp::Add, 5),
        Tok::Minus => (BinOp::Sub, 5),
        Tok::Star => (BinOp::Mul, 6),
        Tok::Slash => (BinOp::Div, 6),
        Tok::Percent => (BinOp::Mod, 6),
        _ => return None,
    })
}

/// `x16` -> 16: the broadcast spelling.
fn broadcast_lanes(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('x')?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

struct Parser<'a> {
    file: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: u32,
    /// Binary operators above the one being parsed; see [`MAX_CHAIN`].
    chain: u32,
    scan: Scan,
    /// Element types from [`ParseOptions::buffer_types`].
    given: HashMap<String, Type>,
    /// Element types the Stmt's stores and typed loads gave buffers the
    /// file states none for.
    learned: HashMap<String, Type>,
    /// A discovery pass: a load of a buffer without a type is a placeholder
    /// (int32) instead of an error.
    discovery: bool,
    /// Placeholders made so far: loads of buffers without a type, and uses
    /// of `let` names whose value reached one.
    placeholders: u32,
    /// `let` names whose value a placeholder reached.
    tainted: HashSet<String>,
    /// `let` names whose value is a placeholder, with its buffer.
    aliases: HashMap<String, String>,
    /// Buffers without a type and where each is first used: found by a
    /// discovery pass, named by the strict pass's error.
    missing: Vec<(String, Span)>,
    /// Buffer names loaded, stored or passed as arguments.
    used: HashSet<String>,
    scope: Scope,
    func: FuncInfo,
}

impl Parser<'_> {
    // ---- token helpers ----

    fn peek(&self) -> &Token {
        self.at(0)
    }

    fn at(&self, ahead: usize) -> &Token {
        let i = (self.pos + ahead).min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn span(&self) -> Span {
        self.peek().span
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn err(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, span, msg)
    }

    fn unsupported(&self, span: Span, what: &str) -> Diagnostic {
        self.err(span, format!("unsupported: {what} at line {}", span.line))
    }

    fn expected(&self, what: &str) -> Diagnostic {
        let t = self.peek();
        self.err(t.span, format!("expected {what}, found {}", t.tok.describe()))
    }

    fn expect(&mut self, tok: Tok, what: &str) -> PResult<Span> {
        if self.peek().tok == tok {
            Ok(self.bump().span)
        } else {
            Err(self.expected(what))
        }
    }

    fn is_ident(&self, ahead: usize, word: &str) -> bool {
        matches!(&self.at(ahead).tok, Tok::Ident(s) if s == word)
    }

    /// Token `ahead` is `tok` and on the same line as the one before it.
    fn follows(&self, ahead: usize, tok: &Tok) -> bool {
        let t = self.at(ahead);
        &t.tok == tok && !t.starts_line
    }

    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                Ok((s, self.bump().span))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn int_literal(&mut self, what: &str) -> PResult<i64> {
        let neg = self.peek().tok == Tok::Minus;
        if neg {
            self.bump();
        }
        match self.peek().tok {
            Tok::Int(v) if v <= i64::MAX as u64 => {
                self.bump();
                Ok(if neg { -(v as i64) } else { v as i64 })
            }
            _ => Err(self.expected(what)),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(self.span(), format!("nested more than {MAX_DEPTH} deep")));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---- module and functions ----

    fn module(&mut self) -> PResult<Module> {
        let (name, target) = match self.peek().tok.clone() {
            Tok::ModuleHeader { name, target } => {
                self.bump();
                (name, target)
            }
            _ => return Err(self.expected("`module name=NAME, target=TARGET`")),
        };
        let mut m = Module { name, target, buffers: vec![], funcs: vec![] };
        loop {
            match self.peek().tok.clone() {
                Tok::Eof => return Ok(m),
                Tok::BufferDecl(b) => {
                    self.bump();
                    m.buffers.push(b);
                }
                Tok::ModuleHeader { .. } => return Err(self.unsupported(self.span(), "a second module")),
                _ => m.funcs.push(self.func()?),
            }
        }
    }

    fn func(&mut self) -> PResult<Func> {
        let linkage = match &self.peek().tok {
            Tok::Ident(w) if w == "func" => Linkage::External,
            Tok::Ident(w) => match Linkage::from_name(w) {
                Some(l) => {
                    self.bump();
                    l
                }
                None => return Err(self.expected("a function (`external_plus_metadata func NAME (ARGS) {`)")),
            },
            _ => return Err(self.expected("a function (`external_plus_metadata func NAME (ARGS) {`)")),
        };
        if !self.is_ident(0, "func") {
            return Err(self.expected("`func`"));
        }
        self.bump();
        let (name, _) = self.ident("a function name")?;
        self.expect(Tok::LParen, "`(`")?;
        let mut arg_names = Vec::new();
        if self.peek().tok != Tok::RParen {
            loop {
                arg_names.push(self.ident("an argument name")?);
                if self.peek().tok != Tok::Comma {
                    break;
                }
                self.bump();
            }
        }
        self.expect(Tok::RParen, "`,` or `)`")?;
        self.func = FuncInfo { args: arg_names.iter().map(|(n, _)| n.clone()).collect(), free: HashMap::new() };
        let body = self.braced_block()?;
        let args = arg_names.into_iter().map(|(n, span)| self.arg(n, span)).collect::<PResult<_>>()?;
        Ok(Func { name, linkage, args, body })
    }

    /// An argument's kind, from how the body used it.
    fn arg(&mut self, name: String, span: Span) -> PResult<Arg> {
        self.used.insert(name.clone());
        let kind = if self.func.free.contains_key(&format!("{name}.buffer")) {
            let ty = match self.buffer_type_opt(&name) {
                Some(t) => t,
                None if self.discovery => {
                    self.placeholder(&name, span);
                    Type::I32
                }
                None => return Err(self.unknown_buffer(&name, span)),
            };
            let dims = self.scan.dims.get(&name).or_else(|| self.scan.extent_dims.get(&name)).copied().unwrap_or(0);
            ArgKind::Buffer { ty, dims }
        } else if let Some((ty, _)) = self.func.free.get(&name) {
            ArgKind::Scalar { ty: *ty }
        } else if name == "__user_context" {
            ArgKind::Scalar { ty: Type::handle("void *") }
        } else {
            ArgKind::Scalar { ty: Type::I32 }
        };
        Ok(Arg { name, kind })
    }

    // ---- statements ----

    /// `{ stmts }`.
    fn braced_block(&mut self) -> PResult<Stmt> {
        self.expect(Tok::LBrace, "`{`")?;
        self.enter()?;
        let s = self.stmts()?;
        self.leave();
        self.expect(Tok::RBrace, "`}`")?;
        Ok(s)
    }

    /// Statements up to a `}`; a `let` or `allocate` takes the rest as its body.
    fn stmts(&mut self) -> PResult<Stmt> {
        let mut items = Vec::new();
        let result = self.items(&mut items);
        // Leave the scopes this block opened, even after an error.
        for item in items.iter().rev() {
            match item {
                Item::Binder(Binder::Let { name, .. }) => self.scope.pop_var(name),
                Item::Binder(Binder::Allocate { name, .. }) => self.scope.pop_alloc(name),
                Item::Stmt(_) => {}
            }
        }
        result?;
        // Fold from the back: each binder's body is everything after it.
        let mut tail: Vec<Stmt> = Vec::new();
        for item in items.into_iter().rev() {
            match item {
                Item::Stmt(s) => tail.push(s),
                Item::Binder(b) => {
                    tail.reverse();
                    let body = Box::new(block(std::mem::take(&mut tail)));
                    tail.push(match b {
                        Binder::Let { name, value } => Stmt::Let { name, value, body },
                        Binder::Allocate { name, ty, extents, memory, condition } => {
                            Stmt::Allocate { name, ty, extents, memory, condition, body }
                        }
                    });
                }
            }
        }
        tail.reverse();
        Ok(block(tail))
    }

    /// Statements up to a `}`, each binder in scope for those after it.
    fn items(&mut self, items: &mut Vec<Item>) -> PResult<()> {
        while !matches!(self.peek().tok, Tok::RBrace | Tok::Eof) {
            let item = self.stmt()?;
            match &item {
                Item::Binder(Binder::Let { name, value }) => self.scope.push_var(name, value.ty),
                Item::Binder(Binder::Allocate { name, ty, .. }) => self.scope.push_alloc(name, *ty),
                Item::Stmt(_) => {}
            }
            items.push(item);
        }
        Ok(())
    }

    fn stmt(&mut self) -> PResult<Item> {
        let span = self.span();
        let Tok::Ident(word) = self.peek().tok.clone() else {
            return Ok(Item::Stmt(self.evaluate()?));
        };
        let next = self.at(1).tok.clone();
        let s = match (word.as_str(), &next) {
            ("let", Tok::Ident(_)) if self.at(2).tok == Tok::Assign => return self.let_stmt(),
            ("allocate", Tok::Ident(_)) => return self.allocate(),
            ("assert", Tok::LParen) => {
                self.bump();
                self.bump();
                let cond = self.expr()?;
                if !cond.ty.is_bool() || !cond.ty.is_scalar() {
                    return Err(self.err(span, format!("type mismatch: assert condition is {}, not a bool scalar", cond.ty)));
                }
                self.expect(Tok::Comma, "`,`")?;
                let message = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                Stmt::Assert { cond, message }
            }
            ("produce" | "consume", Tok::Ident(name)) => {
                self.bump();
                self.bump();
                let body = Box::new(self.braced_block()?);
                Stmt::ProducerConsumer { name: name.clone(), is_producer: word == "produce", body }
            }
            ("for" | "parallel" | "vectorized" | "unrolled", Tok::LParen) => self.for_loop()?,
            ("for" | "parallel" | "vectorized" | "unrolled" | "extern" | "gpu_block" | "gpu_thread" | "gpu_lane", Tok::Lt | Tok::LParen) => {
                return Err(self.unsupported(span, &format!("`{word}` loop")));
            }
            ("if", Tok::LParen) => self.if_stmt()?,
            ("free", Tok::Ident(name)) => {
                self.bump();
                self.bump();
                Stmt::Free { name: name.clone() }
            }
            ("atomic", Tok::LBrace | Tok::LParen) => {
                self.bump();
                let mutex = if self.peek().tok == Tok::LParen {
                    self.bump();
                    let (m, _) = self.ident("a mutex name")?;
                    self.expect(Tok::RParen, "`)`")?;
                    Some(m)
                } else {
                    None
                };
                Stmt::Atomic { mutex, body: Box::new(self.braced_block()?) }
            }
            ("predicate", Tok::LParen) => {
                self.bump();
                self.bump();
                let pred = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                if !matches!(self.peek().tok, Tok::Ident(_)) || self.at(1).tok != Tok::LBracket {
                    return Err(self.expected("a store after `predicate (...)`"));
                }
                self.store(Some(pred))?
            }
            ("fork", Tok::LBrace) | ("acquire", Tok::LParen) | ("realize" | "prefetch", Tok::Ident(_)) => {
                return Err(self.unsupported(span, &format!("`{word}`")));
            }
            (_, Tok::LBracket) if self.follows(1, &Tok::LBracket) => self.store(None)?,
            _ => self.evaluate()?,
        };
        Ok(Item::Stmt(s))
    }

    fn evaluate(&mut self) -> PResult<Stmt> {
        if matches!(self.peek().tok, Tok::RParen | Tok::RBracket | Tok::Comma | Tok::Assign) {
            return Err(self.expected("a statement"));
        }
        Ok(Stmt::Evaluate(self.expr()?))
    }

    /// `let NAME = VALUE`, or a `let NAME = VALUE in BODY` expression statement.
    fn let_stmt(&mut self) -> PResult<Item> {
        self.bump();
        let (name, _) = self.ident("a name")?;
        self.expect(Tok::Assign, "`=`")?;
        let value = self.let_value(&name)?;
        if self.is_ident(0, "in") && !self.peek().starts_line {
            let e = self.let_body(name, value)?;
            return Ok(Item::Stmt(Stmt::Evaluate(e)));
        }
        Ok(Item::Binder(Binder::Let { name, value }))
    }

    /// `allocate NAME[TYPE * EXTENT ...] [in MEMORY] [if COND]`.
    fn allocate(&mut self) -> PResult<Item> {
        self.bump();
        let (name, _) = self.ident("a buffer name")?;
        self.expect(Tok::LBracket, "`[`")?;
        let tspan = self.span();
        let ty = self.type_name()?;
        if !ty.is_scalar() {
            return Err(self.err(tspan, format!("allocate needs a scalar element type, not {ty}")));
        }
        let mut extents = Vec::new();
        while self.peek().tok == Tok::Star {
            self.bump();
            let e = self.unary()?;
            if e.ty != Type::I32 {
                return Err(self.err(tspan, format!("type mismatch: allocation extent is {}, not int32", e.ty)));
            }
            extents.push(e);
        }
        self.expect(Tok::RBracket, "`*` or `]`")?;
        let mut memory = MemoryType::Auto;
        if self.is_ident(0, "in") && !self.peek().starts_line {
            self.bump();
            let (m, mspan) = self.ident("a memory type")?;
            memory = MemoryType::from_name(&m).ok_or_else(|| self.unsupported(mspan, &format!("memory type `{m}`")))?;
        }
        let mut condition = None;
        if self.is_ident(0, "if") && !self.peek().starts_line {
            self.bump();
            let c = self.unary()?;
            if !c.ty.is_bool() || !c.ty.is_scalar() {
                return Err(self.err(tspan, format!("type mismatch: allocate condition is {}, not a bool scalar", c.ty)));
            }
            condition = Some(c);
        }
        if self.is_ident(0, "custom_new") || self.is_ident(0, "custom_delete") {
            return Err(self.unsupported(self.span(), "custom allocator"));
        }
        Ok(Item::Binder(Binder::Allocate { name, ty, extents, memory, condition }))
    }

    fn for_loop(&mut self) -> PResult<Stmt> {
        let (word, _) = self.ident("a loop")?;
        let kind = match word.as_str() {
            "for" => ForKind::Serial,
            "parallel" => ForKind::Parallel,
            "vectorized" => ForKind::Vectorized,
            _ => ForKind::Unrolled,
        };
        self.expect(Tok::LParen, "`(`")?;
        let (name, _) = self.ident("a loop variable")?;
        self.expect(Tok::Comma, "`,`")?;
        let mspan = self.span();
        let min = self.expr()?;
        self.expect(Tok::Comma, "`,`")?;
        let espan = self.span();
        let extent = self.expr()?;
        self.expect(Tok::RParen, "`)`")?;
        for (e, span, what) in [(&min, mspan, "min"), (&extent, espan, "extent")] {
            if e.ty != Type::I32 {
                return Err(self.err(span, format!("type mismatch: loop {what} is {}, not int32", e.ty)));
            }
        }
        self.scope.push_var(&name, Type::I32);
        let body = self.braced_block();
        self.scope.pop_var(&name);
        Ok(Stmt::For { name, kind, min, extent, body: Box::new(body?) })
    }

    fn if_stmt(&mut self) -> PResult<Stmt> {
        self.bump();
        self.expect(Tok::LParen, "`(`")?;
        let cspan = self.span();
        let cond = self.expr()?;
        if !cond.ty.is_bool() || !cond.ty.is_scalar() {
            return Err(self.err(cspan, format!("type mismatch: if condition is {}, not a bool scalar", cond.ty)));
        }
        self.expect(Tok::RParen, "`)`")?;
        let then_case = Box::new(self.braced_block()?);
        let else_case = if self.is_ident(0, "else") {
            self.bump();
            if self.is_ident(0, "if") {
                self.enter()?;
                let s = self.if_stmt();
                self.leave();
                Some(Box::new(s?))
            } else {
                Some(Box::new(self.braced_block()?))
            }
        } else {
            None
        };
        Ok(Stmt::IfThenElse { cond, then_case, else_case })
    }

    /// `NAME[INDEX] = VALUE [if PRED]`, `pred` from a `predicate (...)` line.
    fn store(&mut self, mut predicate: Option<Expr>) -> PResult<Stmt> {
        let (name, _) = self.ident("a buffer name")?;
        let (index, alignment) = self.index()?;
        self.expect(Tok::Assign, "`=`")?;
        let vspan = self.span();
        let before = self.placeholders;
        let mut value = self.expr()?;
        let clean = self.placeholders == before;
        if self.is_ident(0, "if") && !self.peek().starts_line {
            let pspan = self.span();
            self.bump();
            if predicate.is_some() {
                return Err(self.err(pspan, "a store has one predicate"));
            }
            predicate = Some(self.unary()?);
        }
        let lanes = index.ty.lanes;
        if let Some(p) = &predicate
            && (!p.ty.is_bool() || p.ty.lanes != lanes)
        {
            return Err(self.err(vspan, format!("type mismatch: store predicate is {}, not uint1x{lanes}", p.ty)));
        }
        self.used.insert(name.clone());
        let elem = match self.buffer_type_opt(&name) {
            Some(t) => {
                self.resolve(&mut value, t);
                t
            }
            None => {
                // The stored value types the buffer (a bare literal is int32:
                // Halide prints any other literal with its type), unless a
                // placeholder reached it.
                let t = value.ty.element();
                if clean {
                    self.learned.insert(name.clone(), t);
                }
                t
            }
        };
        if infer::is_bare_literal(&value) && elem != Type::I32 {
            value = infer::coerce_literal(value, elem.with_lanes(lanes)).map_err(|m| self.err(vspan, m))?;
        }
        if value.ty.lanes != lanes {
            return Err(self.err(vspan, format!("lane mismatch: index has {lanes} lanes, value has {}", value.ty.lanes)));
        }
        if !value.ty.element().matches(elem) && !self.tolerated(&[&value]) {
            return Err(self.err(vspan, format!("type mismatch: storing {} to `{name}` of {elem}", value.ty)));
        }
        Ok(Stmt::Store { name, index, value, predicate, alignment })
    }

    /// `[INDEX [aligned(M, R)]]`.
    fn index(&mut self) -> PResult<(Expr, Option<Alignment>)> {
        self.expect(Tok::LBracket, "`[`")?;
        let ispan = self.span();
        let index = self.expr()?;
        if !index.ty.is_int() || index.ty.bits != 32 {
            return Err(self.err(ispan, format!("type mismatch: index is {}, not int32", index.ty)));
        }
        let mut alignment = None;
        if self.is_ident(0, "aligned") {
            self.bump();
            self.expect(Tok::LParen, "`(`")?;
            let modulus = self.int_literal("an alignment modulus")?;
            self.expect(Tok::Comma, "`,`")?;
            let remainder = self.int_literal("an alignment remainder")?;
            self.expect(Tok::RParen, "`)`")?;
            alignment = Some(Alignment { modulus, remainder });
        }
        self.expect(Tok::RBracket, "`]`")?;
        Ok((index, alignment))
    }

    /// The buffer a discovery pass's placeholder `e` loads from, if it is one:
    /// an int32 load of a buffer that had no type when it was read (it may
    /// have learned one since).
    fn placeholder_of(&self, e: &Expr) -> Option<String> {
        match &e.kind {
            ExprKind::Load { name, .. } if self.discovery && e.ty.element() == Type::I32 && self.missing.iter().any(|(n, _)| n == name) => {
                Some(name.clone())
            }
            _ => None,
        }
    }

    /// Whether a placeholder, or a `let` name whose value a placeholder
    /// reached, is in `e`: its type may be a placeholder's.
    fn reaches_placeholder(&self, e: &Expr) -> bool {
        if !self.discovery || self.placeholders == 0 {
            return false;
        }
        let mut found = false;
        e.visit(&mut |x| {
            found |= match &x.kind {
                ExprKind::Var(n) => self.tainted.contains(n),
                ExprKind::Load { .. } => self.placeholder_of(x).is_some(),
                _ => false,
            }
        });
        found
    }

    /// Whether a type error among `exprs` is let pass: in a discovery pass,
    /// when a placeholder reaches one of them (its type is a guess).
    fn tolerated(&self, exprs: &[&Expr]) -> bool {
        exprs.iter().any(|e| self.reaches_placeholder(e))
    }

    /// Gives placeholder `e` (if it is one) the element type `elem`, which its
    /// context fixes, and learns it for its buffer. (It still counts as a
    /// placeholder: what it reached learns nothing in this pass, and the
    /// next pass types it from the start.) A context that contradicts what
    /// was learned changes nothing; the strict pass reports it.
    fn resolve(&mut self, e: &mut Expr, elem: Type) {
        let elem = elem.element();
        if elem.is_handle() || !elem.is_valid() {
            return;
        }
        if let Some(name) = self.placeholder_of(e) {
            match self.learned.get(&name) {
                Some(&t) if t != elem => return,
                Some(_) => {}
                None => {
                    self.learned.insert(name, elem);
                }
            }
            e.ty = elem.with_lanes(e.ty.lanes);
            return;
        }
        // Into what has the same element type as `e`: the operands of
        // arithmetic, `min`, `max`, the arms of `select`, a `let`'s body, a
        // broadcast's value, and the arguments of intrinsics whose rules tie
        // them to the result. Types above a placeholder were computed from
        // it, so this pass learns but does not retype them; the next pass
        // types them from the start.
        match &mut e.kind {
            ExprKind::Var(n) => {
                if let Some(buf) = self.aliases.get(n.as_str())
                    && !self.learned.contains_key(buf)
                {
                    self.learned.insert(buf.clone(), elem);
                }
            }
            ExprKind::Binary(op, a, b) if !op.is_comparison() && !op.is_logical() => {
                self.resolve(a, elem);
                self.resolve(b, elem);
            }
            ExprKind::Select(_, a, b) => {
                self.resolve(a, elem);
                self.resolve(b, elem);
            }
            ExprKind::Let { body, .. } => self.resolve(body, elem),
            ExprKind::Broadcast { value, .. } => self.resolve(value, elem),
            ExprKind::Call { callee: Callee::Intrinsic(op), args } => {
                let lanes = e.ty.lanes;
                self.resolve_intrinsic_args(*op, args, elem.with_lanes(lanes));
            }
            _ => {}
        }
    }

    /// Two operands that must have one type: a placeholder takes the other's.
    fn resolve_pair(&mut self, a: &mut Expr, b: &mut Expr) {
        if !self.discovery || (!self.reaches_placeholder(a) && !self.reaches_placeholder(b)) {
            return;
        }
        let typed = |p: &Self, e: &Expr| !infer::is_bare_literal(e) && !p.reaches_placeholder(e);
        if typed(self, b) {
            self.resolve(a, b.ty);
        } else if typed(self, a) {
            self.resolve(b, a.ty);
        }
    }

    /// Placeholders among the arguments of call `name` whose type the call
    /// fixes: from a typed other argument of the same type, or from the
    /// printed result type `annot` by the intrinsic's rule.
    fn resolve_call_args(&mut self, name: &str, args: &mut [Expr], annot: Option<Type>) {
        use Intrinsic::*;
        if !self.discovery || !args.iter().any(|a| self.reaches_placeholder(a)) {
            return;
        }
        // Arguments i and i + 1 have one type.
        let pair = |p: &mut Self, args: &mut [Expr], i: usize| {
            if let Some([a, b]) = args.get_mut(i..i + 2) {
                p.resolve_pair(a, b);
            }
        };
        match name {
            "min" | "max" if args.len() == 2 => return pair(self, args, 0),
            "select" if args.len() == 3 => return pair(self, args, 1),
            _ => {}
        }
        if ReduceOp::from_name(name).is_some() {
            if let (Some(t), [v]) = (annot, &mut *args) {
                self.resolve(v, t);
            }
            return;
        }
        let Some(op) = Intrinsic::from_name(name) else { return };
        // Arguments of one type with each other.
        match op {
            WideningAdd | WideningSub | SaturatingAdd | SaturatingSub | HalvingAdd | HalvingSub | RoundingHalvingAdd
            | SortedAvg | DivRoundToZero | ModRoundToZero | BitwiseAnd | BitwiseOr | BitwiseXor | MulShiftRight
            | RoundingMulShiftRight | Absd | Lerp
                if args.len() >= 2 =>
            {
                pair(self, args, 0)
            }
            IfThenElse if args.len() == 3 => pair(self, args, 1),
            _ => {}
        }
        if let Some(t) = annot {
            self.resolve_intrinsic_args(op, args, t);
        }
    }

    /// Placeholders among the arguments of intrinsic `op` whose result is of
    /// type `t`, where `op`'s rule fixes an argument's type from the result's.
    fn resolve_intrinsic_args(&mut self, op: Intrinsic, args: &mut [Expr], t: Type) {
        use Intrinsic::*;
        let (same, half): (&[usize], &[usize]) = match op {
            SaturatingAdd | SaturatingSub | HalvingAdd | HalvingSub | RoundingHalvingAdd | SortedAvg | DivRoundToZero
            | ModRoundToZero | BitwiseAnd | BitwiseOr | BitwiseXor | MulShiftRight | RoundingMulShiftRight => (&[0, 1], &[]),
            BitwiseNot | CountLeadingZeros | CountTrailingZeros | Popcount | ShiftLeft | ShiftRight | RoundingShiftLeft
            | RoundingShiftRight | Likely | LikelyIfInnermost | PromiseClamped | UnsafePromiseClamped => (&[0], &[]),
            WideningAdd | WideningShiftLeft | WideningShiftRight => (&[], &[0, 1]),
            WideningMul if t.is_uint() => (&[], &[0, 1]),
            _ => (&[], &[]),
        };
        for &i in same {
            if let Some(a) = args.get_mut(i) {
                self.resolve(a, t);
            }
        }
        for &i in half {
            // widening_shift_*'s shift is only as wide as its value.
            if op != WideningAdd && op != WideningMul && i == 1 {
                continue;
            }
            if let Some(a) = args.get_mut(i)
                && t.bits >= 16
            {
                self.resolve(a, t.with_bits(t.bits / 2));
            }
        }
    }

    /// A discovery pass's stand-in for a load of buffer `name`, which has no
    /// type yet.
    fn placeholder(&mut self, name: &str, span: Span) {
        self.placeholders += 1;
        if !self.missing.iter().any(|(n, _)| n == name) {
            self.missing.push((name.to_string(), span));
        }
    }

    fn unknown_buffer(&self, name: &str, span: Span) -> Diagnostic {
        let mut msg = format!(
            "unknown buffer `{name}` at line {}: no `{name}.type` check, allocation, bounds query or store gives its element type; pass --buffer-type {name}=TYPE",
            span.line
        );
        let others: Vec<String> =
            self.missing.iter().filter(|(n, _)| n != name).map(|(n, s)| format!("`{n}` (line {})", s.line)).collect();
        if !others.is_empty() {
            let _ = write!(msg, "; also without a type: {}", others.join(", "));
        }
        self.err(span, msg)
    }

    /// The element type of buffer `name`, if known (see the module comment
    /// for where it comes from).
    fn buffer_type_opt(&self, name: &str) -> Option<Type> {
        self.scope
            .alloc(name)
            .or_else(|| self.scan.stated(name).map(|(t, _, _)| t))
            .or_else(|| self.given.get(name).copied())
            .or_else(|| self.learned.get(name).copied())
    }

    // ---- types ----

    /// A type as written in an allocation: a type word or `(C type *)`.
    fn type_name(&mut self) -> PResult<Type> {
        if let Some((t, next)) = self.paren_type(self.pos, true)? {
            self.pos = next;
            return Ok(t);
        }
        let (w, span) = self.ident("a type")?;
        self.type_word(&w, span)?.ok_or_else(|| self.err(span, format!("unknown type `{w}`")))
    }

    /// A type word (`uint8x64`), `None` if `w` is not shaped like one.
    fn type_word(&self, w: &str, span: Span) -> PResult<Option<Type>> {
        if let Some(t) = Type::from_word(w) {
            return Ok(Some(t));
        }
        if w.starts_with("bfloat") && w[6..].starts_with(|c: char| c.is_ascii_digit()) {
            return Err(self.unsupported(span, &format!("type `{w}`")));
        }
        let shaped = ["int", "uint", "float"].iter().any(|p| w.strip_prefix(p).is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit())));
        if shaped && w.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(self.err(span, format!("unknown type `{w}`")));
        }
        Ok(None)
    }

    /// A parenthesized type at token `i`: `(uint16)`, `(void *)`,
    /// `(struct halide_buffer_t *)`, or `(halide_task_t)` when an operand
    /// follows. Returns the type and the token after `)`. `in_type_position`:
    /// no operand need follow (allocation element types).
    fn paren_type(&self, i: usize, in_type_position: bool) -> PResult<Option<(Type, usize)>> {
        let tok = |k: usize| &self.toks[(i + k).min(self.toks.len() - 1)].tok;
        if *tok(0) != Tok::LParen {
            return Ok(None);
        }
        if let Tok::Ident(w) = tok(1)
            && *tok(2) == Tok::RParen
            && let Some(t) = self.type_word(w, self.toks[i + 1].span)?
        {
            return Ok(Some((t, i + 3)));
        }
        let mut words = Vec::new();
        let mut k = 1;
        while let Tok::Ident(w) = tok(k) {
            words.push(w.as_str());
            k += 1;
        }
        let mut stars = 0;
        while *tok(k) == Tok::Star {
            stars += 1;
            k += 1;
        }
        if words.is_empty() || *tok(k) != Tok::RParen {
            return Ok(None);
        }
        let after = &self.toks[(i + k + 1).min(self.toks.len() - 1)];
        let operand_follows =
            !after.starts_line && matches!(after.tok, Tok::Ident(_) | Tok::Int(_) | Tok::Str(_) | Tok::LParen);
        if stars == 0 && words.len() == 1 && !(operand_follows || in_type_position) {
            return Ok(None);
        }
        let mut spelling = words.join(" ");
        if stars > 0 {
            spelling.push(' ');
            spelling.push_str(&"*".repeat(stars));
        }
        let spelling = older::current_handle_spelling(&words, stars).unwrap_or(spelling);
        Ok(Some((Type::handle(&spelling), i + k + 1)))
    }

    // ---- expressions ----

    fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let e = self.binary(0);
        self.leave();
        e
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let base = self.chain;
        let r = self.binary_chain(min_prec);
        self.chain = base;
        r
    }

    fn binary_chain(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        loop {
            let t = self.peek();
            if t.starts_line {
                break;
            }
            let Some((op, prec)) = binop(&t.tok) else { break };
            if prec < min_prec {
                break;
            }
            let span = self.bump().span;
            self.chain += 1;
            if self.chain > MAX_CHAIN {
                return Err(self.err(span, format!("more than {MAX_CHAIN} binary operators in one expression; split it with a `let`")));
            }
            let mut rhs = self.binary(prec + 1)?;
            self.resolve_pair(&mut lhs, &mut rhs);
            let guess = self.tolerated(&[&lhs, &rhs]).then(|| (lhs.clone(), rhs.clone()));
            lhs = match (self.make_binary(op, lhs, rhs, span), guess) {
                (Ok(e), _) => e,
                // A discovery pass goes on past a type its placeholders broke.
                (Err(_), Some((a, b))) => {
                    let ty = if self.reaches_placeholder(&a) { b.ty } else { a.ty };
                    let ty = if op.is_comparison() || op.is_logical() { Type::bool().with_lanes(ty.lanes) } else { ty };
                    Expr::new(ty, ExprKind::Binary(op, Box::new(a), Box::new(b)))
                }
                (Err(d), None) => return Err(d),
            };
        }
        Ok(lhs)
    }

    fn make_binary(&self, op: BinOp, a: Expr, b: Expr, span: Span) -> PResult<Expr> {
        let (a, b) = infer::unify(a, b).map_err(|m| self.err(span, m))?;
        let ty = infer::binary_type(op, a.ty, b.ty).map_err(|m| self.err(span, m))?;
        Ok(Expr::new(ty, ExprKind::Binary(op, Box::new(a), Box::new(b))))
    }

    fn unary(&mut self) -> PResult<Expr> {
        if self.peek().tok == Tok::Bang {
            let span = self.bump().span;
            self.enter()?;
            let a = self.unary();
            self.leave();
            let a = a?;
            if !a.ty.is_bool() {
                return Err(self.err(span, format!("type mismatch: `!` of {}", a.ty)));
            }
            return Ok(Expr::new(a.ty, ExprKind::Not(Box::new(a))));
        }
        self.primary(None)
    }

    /// A primary expression; `annot` is a `(type)` printed before it.
    fn primary(&mut self, annot: Option<(Type, Span)>) -> PResult<Expr> {
        let span = self.span();
        match self.peek().tok.clone() {
            Tok::LParen if annot.is_none() => {
                if let Some((t, next)) = self.paren_type(self.pos, false)? {
                    self.pos = next;
                    return self.primary(Some((t, span)));
                }
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                Ok(e)
            }
            Tok::LParen => {
                // `(T)(e)`: a cast.
                let (t, tspan) = annot.unwrap_or((Type::I32, span));
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                let ty = infer::cast_type(t, e.ty).map_err(|m| self.err(tspan, m))?;
                Ok(Expr::new(ty, ExprKind::Cast(Box::new(e))))
            }
            Tok::Int(_) | Tok::Minus => self.number(annot),
            Tok::Float(v, bits) => {
                self.bump();
                self.float(v, bits, annot)
            }
            Tok::Str(s) => {
                self.bump();
                let e = Expr::new(Type::handle("const char *"), ExprKind::Str(s));
                self.check_annot(e, annot)
            }
            Tok::Ident(_) => self.ident_expr(annot),
            _ => Err(self.expected("an expression")),
        }
    }

    fn check_annot(&self, e: Expr, annot: Option<(Type, Span)>) -> PResult<Expr> {
        match annot {
            Some((t, span)) if !t.matches(e.ty) => Err(self.err(span, format!("type mismatch: expression is {}, not {t}", e.ty))),
            _ => Ok(e),
        }
    }

    /// An integer literal, maybe negative, typed by `annot` (int32 if none).
    fn number(&mut self, annot: Option<(Type, Span)>) -> PResult<Expr> {
        let span = self.span();
        let neg = self.peek().tok == Tok::Minus;
        if neg {
            self.bump();
        }
        let t = self.bump();
        let v: i128 = match t.tok {
            Tok::Int(v) => v as i128,
            Tok::Float(v, bits) if neg => return self.float(-v, bits, annot),
            _ => return Err(self.err(t.span, format!("expected a number, found {}", t.tok.describe()))),
        };
        let v = if neg { -v } else { v };
        let (ty, tspan) = annot.unwrap_or((Type::I32, span));
        if ty.is_vector() || ty.is_handle() {
            return Err(self.err(tspan, format!("type mismatch: literal {v} of type {ty}")));
        }
        if ty.is_float() {
            return self.float(v as f64, ty.bits, None);
        }
        if !ty.holds(v) {
            let hint = if annot.is_none() { "; give it a type such as (int64)" } else { "" };
            return Err(self.err(span, format!("literal {v} does not fit {ty}{hint}")));
        }
        let kind = if ty.is_int() { ExprKind::Int(v as i64) } else { ExprKind::UInt(v as u64) };
        Ok(Expr::new(ty, kind))
    }

    /// A float literal, rounded to its width.
    fn float(&self, v: f64, bits: u8, annot: Option<(Type, Span)>) -> PResult<Expr> {
        let v = round_float(v, bits);
        self.check_annot(Expr::new(Type::float(bits), ExprKind::Float(v)), annot)
    }

    /// An expression starting with a name: variable, load, call, cast,
    /// broadcast, `let`, `reinterpret<T>(...)`.
    fn ident_expr(&mut self, annot: Option<(Type, Span)>) -> PResult<Expr> {
        let (name, span) = self.ident("a name")?;
        if name == "let" && matches!(self.peek().tok, Tok::Ident(_)) && self.at(1).tok == Tok::Assign {
            let (var, _) = self.ident("a name")?;
            self.bump();
            let value = self.let_value(&var)?;
            if !self.is_ident(0, "in") || self.peek().starts_line {
                return Err(self.expected("`in`"));
            }
            let e = self.let_body(var, value)?;
            return self.check_annot(e, annot);
        }
        if name == "reinterpret" && self.follows(0, &Tok::Lt) {
            self.bump();
            let t = self.type_name()?;
            self.expect(Tok::Gt, "`>`")?;
            self.expect(Tok::LParen, "`(`")?;
            let e = self.expr()?;
            self.expect(Tok::RParen, "`)`")?;
            let ty = infer::reinterpret_type(t, e.ty).map_err(|m| self.err(span, m))?;
            return self.check_annot(Expr::new(ty, ExprKind::Reinterpret(Box::new(e))), annot);
        }
        if let Some(e) = self.older_form(&name, span, annot)? {
            return Ok(e);
        }
        if self.follows(0, &Tok::LBracket) {
            return self.load(name, span, annot);
        }
        if !self.follows(0, &Tok::LParen) {
            return self.var(name, span, annot);
        }
        // A call-shaped form.
        if let Some(t) = self.type_word(&name, span)? {
            let args = self.args()?;
            let [e] = <[Expr; 1]>::try_from(args).map_err(|a| self.err(span, format!("a cast takes 1 argument, not {}", a.len())))?;
            let ty = infer::cast_type(t, e.ty).map_err(|m| self.err(span, m))?;
            return self.check_annot(Expr::new(ty, ExprKind::Cast(Box::new(e))), annot);
        }
        if let Some(lanes) = broadcast_lanes(&name) {
            let args = self.args()?;
            let [e] = <[Expr; 1]>::try_from(args).map_err(|a| self.err(span, format!("a broadcast takes 1 argument, not {}", a.len())))?;
            let ty = infer::broadcast_type(e.ty, lanes).map_err(|m| self.err(span, m))?;
            return self.check_annot(Expr::new(ty, ExprKind::Broadcast { value: Box::new(e), lanes }), annot);
        }
        let name = older::current_call_name(&name).to_string();
        let args = self.args()?;
        let mut args = args;
        self.resolve_call_args(&name, &mut args, annot.map(|(t, _)| t));
        let guess = self.tolerated(&args.iter().collect::<Vec<_>>()).then(|| args.clone());
        let e = match (self.call(&name, span, args, annot.map(|(t, _)| t)), guess) {
            (Ok(e), _) => e,
            // A discovery pass goes on past a type its placeholders broke.
            (Err(_), Some(args)) => {
                let lanes = args.iter().map(|a| a.ty.lanes).max().unwrap_or(1);
                let ty = annot.map_or(Type::I32.with_lanes(lanes), |(t, _)| t);
                return Ok(Expr::new(ty, ExprKind::Call { callee: Callee::Extern(name), args }));
            }
            (Err(d), None) => return Err(d),
        };
        self.check_annot(e, annot)
    }

    /// `in BODY` of a let expression, with `var` bound to `value`.
    fn let_body(&mut self, var: String, value: Expr) -> PResult<Expr> {
        self.bump(); // `in`
        self.scope.push_var(&var, value.ty);
        let body = self.expr();
        self.scope.pop_var(&var);
        let body = body?;
        Ok(Expr::new(body.ty, ExprKind::Let { name: var, value: Box::new(value), body: Box::new(body) }))
    }

    /// `(a, b, ...)`.
    fn args(&mut self) -> PResult<Vec<Expr>> {
        self.expect(Tok::LParen, "`(`")?;
        let mut args = Vec::new();
        if self.peek().tok != Tok::RParen {
            loop {
                args.push(self.expr()?);
                if self.peek().tok != Tok::Comma {
                    break;
                }
                self.bump();
            }
        }
        self.expect(Tok::RParen, "`,` or `)`")?;
        Ok(args)
    }

    /// A `let`'s value; marks `name` when a placeholder reached it.
    fn let_value(&mut self, name: &str) -> PResult<Expr> {
        let before = self.placeholders;
        let value = self.expr()?;
        if self.placeholders > before {
            self.tainted.insert(name.to_string());
        }
        match self.placeholder_of(&value) {
            Some(buf) => self.aliases.insert(name.to_string(), buf),
            None => self.aliases.remove(name),
        };
        Ok(value)
    }

    fn var(&mut self, name: String, span: Span, annot: Option<(Type, Span)>) -> PResult<Expr> {
        if self.tainted.contains(&name) {
            self.placeholders += 1;
        }
        let ty = if let Some(t) = self.scope.var(&name) {
            t
        } else if self.scope.alloc(&name).is_some() {
            // An allocation's name as a value is its host pointer.
            Type::handle("void *")
        } else {
            let t = match annot {
                Some((t, _)) => t,
                None if self.func.args.contains(&name) => Type::I32,
                None => return Err(self.err(span, format!("undefined variable `{name}`"))),
            };
            match self.func.free.get(&name) {
                Some((seen, at)) if !seen.matches(t) => {
                    return Err(self.err(span, format!("type mismatch: `{name}` is {t} here but {seen} at line {}", at.line)));
                }
                Some(_) => {}
                None => {
                    self.func.free.insert(name.clone(), (t, span));
                }
            }
            t
        };
        self.check_annot(Expr::new(ty, ExprKind::Var(name)), annot)
    }

    /// `NAME[INDEX [aligned(M, R)]] [if PRED]`.
    fn load(&mut self, name: String, span: Span, annot: Option<(Type, Span)>) -> PResult<Expr> {
        let (index, alignment) = self.index()?;
        let lanes = index.ty.lanes;
        self.used.insert(name.clone());
        let known = self.buffer_type_opt(&name);
        let ty = match (annot, known) {
            (Some((t, tspan)), known) => {
                if t.lanes != lanes {
                    return Err(self.err(tspan, format!("lane mismatch: load of {t} with an index of {lanes} lanes")));
                }
                if let Some(k) = known
                    && !k.matches(t.element())
                {
                    return Err(self.err(tspan, format!("type mismatch: `{name}` holds {k}, not {}", t.element())));
                }
                if known.is_none() {
                    self.learned.insert(name.clone(), t.element());
                }
                t
            }
            (None, Some(k)) => k.with_lanes(lanes),
            (None, None) if self.discovery => {
                self.placeholder(&name, span);
                Type::I32.with_lanes(lanes)
            }
            (None, None) => return Err(self.unknown_buffer(&name, span)),
        };
        let mut predicate = None;
        if self.is_ident(0, "if") && !self.peek().starts_line {
            let pspan = self.bump().span;
            let p = self.unary()?;
            if !p.ty.is_bool() || p.ty.lanes != lanes {
                return Err(self.err(pspan, format!("type mismatch: load predicate is {}, not uint1x{lanes}", p.ty)));
            }
            predicate = Some(Box::new(p));
        }
        Ok(Expr::new(ty, ExprKind::Load { name, index: Box::new(index), predicate, alignment }))
    }

    /// A call-shaped form other than a cast or broadcast.
    fn call(&self, name: &str, span: Span, mut args: Vec<Expr>, annot: Option<Type>) -> PResult<Expr> {
        let err = |m: String| self.err(span, m);
        let want = |n: usize, args: &Vec<Expr>| -> PResult<()> {
            if args.len() != n { Err(self.err(span, format!("`{name}` takes {n} arguments, not {}", args.len()))) } else { Ok(()) }
        };
        match name {
            "min" | "max" => {
                want(2, &args)?;
                let op = if name == "min" { BinOp::Min } else { BinOp::Max };
                let b = args.pop().unwrap();
                let a = args.pop().unwrap();
                return self.make_binary(op, a, b, span);
            }
            "select" => {
                want(3, &args)?;
                let f = args.pop().unwrap();
                let t = args.pop().unwrap();
                let c = args.pop().unwrap();
                let (t, f) = infer::unify(t, f).map_err(err)?;
                let ty = infer::select_type(c.ty, t.ty, f.ty).map_err(err)?;
                return Ok(Expr::new(ty, ExprKind::Select(Box::new(c), Box::new(t), Box::new(f))));
            }
            "ramp" => {
                want(3, &args)?;
                let lanes = literal_u32(&args[2]).ok_or_else(|| err("a ramp's lane count must be a literal".into()))?;
                args.pop();
                let s = args.pop().unwrap();
                let b = args.pop().unwrap();
                let (b, s) = infer::unify(b, s).map_err(err)?;
                let ty = infer::ramp_type(b.ty, s.ty, lanes).map_err(err)?;
                return Ok(Expr::new(ty, ExprKind::Ramp { base: Box::new(b), stride: Box::new(s), lanes }));
            }
            "concat_vectors" | "interleave_vectors" | "slice_vectors" | "extract_element" | "shuffle" => {
                return self.shuffle(name, span, args);
            }
            _ => {}
        }
        if let Some(op) = ReduceOp::from_name(name) {
            want(1, &args)?;
            let value = args.pop().unwrap();
            let ty = infer::reduce_type(op, value.ty, annot).map_err(err)?;
            return Ok(Expr::new(ty, ExprKind::VectorReduce { op, value: Box::new(value) }));
        }
        let types: Vec<Type> = args.iter().map(|a| a.ty).collect();
        let (callee, ty) = if let Some(op) = Intrinsic::from_name(name) {
            (Callee::Intrinsic(op), infer::intrinsic_type(op, &types, annot).map_err(err)?)
        } else if infer::is_extern(name) {
            (Callee::Extern(name.to_string()), infer::extern_call_type(name, annot).map_err(err)?)
        } else if UNSUPPORTED_CALLS.contains(&name) {
            return Err(self.unsupported(span, &format!("`{name}`")));
        } else {
            return Err(err(format!("unknown intrinsic `{name}`")));
        };
        Ok(Expr::new(ty, ExprKind::Call { callee, args }))
    }

    /// The shuffle spellings; all become vectors plus lane indices.
    fn shuffle(&self, name: &str, span: Span, mut args: Vec<Expr>) -> PResult<Expr> {
        let err = |m: String| self.err(span, m);
        let trailing = |args: &mut Vec<Expr>, n: usize| -> PResult<Vec<u32>> {
            if args.len() <= n {
                return Err(err(format!("`{name}` needs a vector and {n} literal arguments")));
            }
            let tail = args.split_off(args.len() - n);
            tail.iter().map(|e| literal_u32(e).ok_or_else(|| err(format!("`{name}` needs literal lane numbers")))).collect()
        };
        let lanes: Vec<u32> = args.iter().map(|a| a.ty.lanes).collect();
        // The index list is built here, one entry per result lane, so its
        // length is checked first (Halide's own lanes are 16 bits).
        let total: u64 = lanes.iter().map(|&l| l as u64).sum();
        let too_many = |n: u64| err(format!("`{name}` makes {n} lanes; at most {MAX_SHUFFLE_LANES} are allowed"));
        if matches!(name, "concat_vectors" | "interleave_vectors") && total > MAX_SHUFFLE_LANES as u64 {
            return Err(too_many(total));
        }
        let total = total.min(MAX_SHUFFLE_LANES as u64) as u32;
        let indices: Vec<u32> = match name {
            "concat_vectors" => (0..total).collect(),
            "interleave_vectors" => {
                let (k, n) = (lanes.len() as u32, lanes.first().copied().unwrap_or(0));
                if lanes.iter().any(|&l| l != n) {
                    return Err(err("lane mismatch: `interleave_vectors` of vectors of different lanes".into()));
                }
                (0..total).map(|i| (i % k) * n + i / k).collect()
            }
            "slice_vectors" => {
                let t = trailing(&mut args, 3)?;
                let (begin, stride, size) = (t[0] as u64, t[1] as u64, t[2] as u64);
                if size > MAX_SHUFFLE_LANES as u64 {
                    return Err(too_many(size));
                }
                if size == 0 || begin + stride * (size - 1) > u32::MAX as u64 {
                    return Err(err("`slice_vectors` out of range".into()));
                }
                (0..size).map(|i| (begin + stride * i) as u32).collect()
            }
            "extract_element" => trailing(&mut args, 1)?,
            _ => {
                // shuffle(vectors..., indices...): the indices are the
                // trailing run of literals.
                let k = args.iter().rposition(|a| literal_u32(a).is_none()).map_or(1, |p| p + 1);
                let tail = args.split_off(k.min(args.len()));
                tail.iter().map(|e| literal_u32(e).unwrap()).collect()
            }
        };
        let types: Vec<Type> = args.iter().map(|a| a.ty).collect();
        let ty = infer::shuffle_type(&types, &indices).map_err(err)?;
        Ok(Expr::new(ty, ExprKind::Shuffle { vectors: args, indices }))
    }
}

/// Intrinsics Halide has that this parser does not model.
const UNSUPPORTED_CALLS: &[&str] = &[
    "prefetch",
    "image_load",
    "image_store",
    "hvx_gather",
    "hvx_scatter",
    "hvx_scatter_acc",
    "hvx_scatter_release",
    "gpu_thread_barrier",
    "debug_to_file",
    "memoize_expr",
    "call_cached_indirect_function",
    "bundle",
    "mux",
    "extract_bits",
    "concat_bits",
    "scatter_gather",
    "declare_box_touched",
    "trace",
];

/// A non-negative int32 literal as printed bare, e.g. a lane count.
/// Lanes a shuffle may produce: Halide's `halide_type_t::lanes` is 16 bits.
const MAX_SHUFFLE_LANES: u32 = 65535;

fn literal_u32(e: &Expr) -> Option<u32> {
    match e.kind {
        ExprKind::Int(v) if e.ty == Type::I32 => u32::try_from(v).ok(),
        _ => None,
    }
}
