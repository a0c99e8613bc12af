//! Parser: tokens to [`SpecFile`].
//!
//! ```text
//! file   := item*
//! item   := instr | def
//! instr  := 'instr' NAME '(' params ')' '->' type '[' TARGET FEATURE ('+' FEATURE)* MNEMONIC ']' NL
//!           ('cost' 'latency' NUM 'throughput' NUM 'source' STRING NL)?
//!           stmt*                      -- up to the next 'instr', 'def' or end of file
//! def    := 'def' NAME '(' params ')' '->' type NL stmt*
//! type   := bvN | maskN | immN | pairN | predN   -- pairN is 2N bits, its halves x.lo / x.hi
//! stmt   := 'FOR' VAR ':=' expr ('to' | 'downto') expr NL stmt* 'ENDFOR'
//!         | 'IF' expr 'THEN'? stmt* ('ELSE' 'IF' ... | 'ELSE' stmt*)? 'FI'
//!         | NAME ('.' ('lo' | 'hi'))? ('[' expr (':' expr)? ']')? ':=' expr
//!         | 'RETURN' expr
//! expr   := or ('?' expr ':' expr)?
//! or     := xor ('OR' xor)*                xor := and ('XOR' and)*
//! and    := cmp ('AND' cmp)*               cmp := bor (('==' | '!=' | '<s' | '<u' | '<=s' ...) bor)?
//! bor    := bxor ('|' bxor)*               bxor := band ('^' band)*
//! band   := shift ('&' shift)*             -- symbols bind tighter than comparisons, as in Rust
//! shift  := add (('<<' | '>>u' | '>>s') add)*
//! add    := mul (('+' | '-') mul)*         mul := unary (('*' | '/u' | '%u') unary)*
//! unary  := ('-' | 'NOT' | '~') unary | postfix
//! postfix:= primary ('[' expr (':' expr)? ']')*
//! primary:= NUM | NAME | NAME '.' ('lo' | 'hi') | NAME '(' args ')' | '(' expr ')'
//! ```

use crate::ast::*;
use crate::diag::{Diagnostic, Span};
use crate::lexer::{CmpTok, Tok, Token, lex};
use std::sync::Arc;

/// "an arm", "a hvx": the article and the target name.
fn article(target: &str) -> String {
    let an = target.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {target}", if an { "an" } else { "a" })
}

/// The features a spec header of `target` may name, and an example for the
/// error: a target of the registry ([`misaal_targets::TargetDesc::cpu_features`]:
/// CPUID names for x86, ACLE extensions for ARM, HVX versions), or
/// `halide`, the Halide op library, whose one pseudo-feature is `ir`. A
/// misspelled feature would otherwise load and silently never match the
/// CPU's, so the spec would be skipped (or, worse, assumed).
fn target_features(target: &str) -> Option<(&'static [&'static str], &'static str)> {
    if target == "halide" {
        return Some((&["ir"], "ir"));
    }
    misaal_targets::by_name(target).map(|t| (t.cpu_features, t.example_feature))
}

const KEYWORDS: &[&str] = &[
    "instr", "def", "cost", "FOR", "to", "downto", "ENDFOR", "IF", "THEN", "ELSE", "FI", "RETURN", "AND", "OR", "XOR", "NOT",
];

pub fn parse_file(file: &str, src: &str) -> Result<SpecFile, Diagnostic> {
    let toks = lex(file, src)?;
    let family = std::path::Path::new(file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut p = Parser { file: Arc::from(file), toks, pos: 0, family, depth: 0, blocks: 0 };
    p.file_items()
}

struct Parser {
    file: Arc<str>,
    toks: Vec<Token>,
    pos: usize,
    family: String,
    depth: usize,
    /// FOR, IF and ELSE IF blocks open around the statement being parsed.
    blocks: usize,
}

/// Deeper expressions are rejected rather than risking the stack (of the
/// parser, the checker and the drop of the tree). A chain of binary
/// operators counts one level per operator, as its tree is that deep.
const MAX_NESTING: usize = 200;
/// FOR and IF blocks (and ELSE IF arms) nest at most this deep.
pub const MAX_BLOCK_NESTING: usize = 64;

type PResult<T> = Result<T, Diagnostic>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn err<T>(&self, span: Span, msg: impl Into<String>) -> PResult<T> {
        Err(Diagnostic::new(&self.file, span, msg))
    }
    fn unexpected<T>(&self, expected: &str) -> PResult<T> {
        self.err(self.span(), format!("expected {expected}, found {}", self.peek().describe()))
    }
    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == kw)
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, t: Tok, what: &str) -> PResult<Span> {
        if *self.peek() == t {
            Ok(self.bump().span)
        } else {
            self.unexpected(what)
        }
    }
    fn expect_kw(&mut self, kw: &str) -> PResult<Span> {
        if self.is_kw(kw) { Ok(self.bump().span) } else { self.unexpected(&format!("`{kw}`")) }
    }
    fn skip_newlines(&mut self) {
        while *self.peek() == Tok::Newline {
            self.bump();
        }
    }
    fn end_of_line(&mut self) -> PResult<()> {
        match self.peek() {
            Tok::Newline => {
                self.skip_newlines();
                Ok(())
            }
            Tok::Eof => Ok(()),
            _ => self.unexpected("end of line"),
        }
    }
    fn name(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(s) if !KEYWORDS.contains(&s.as_str()) => Ok((s, self.bump().span)),
            _ => self.unexpected(what),
        }
    }

    fn file_items(&mut self) -> PResult<SpecFile> {
        let mut out = SpecFile::default();
        self.skip_newlines();
        loop {
            match self.peek() {
                Tok::Eof => return Ok(out),
                Tok::Ident(s) if s == "instr" => out.instrs.push(self.instr()?),
                Tok::Ident(s) if s == "def" => out.defs.push(self.def()?),
                _ => return self.unexpected("`instr` or `def`"),
            }
        }
    }

    fn ty(&mut self) -> PResult<Ty> {
        Ok(self.formed_ty()?.0)
    }

    /// A type and its register form: `pairN` is a `bv(2N)` held in two
    /// N-bit registers, `predN` a `maskN` held in a predicate register.
    fn formed_ty(&mut self) -> PResult<(Ty, Form)> {
        let span = self.span();
        let bad = |p: &Self| p.err(span, format!("expected a type (bvN, maskN or immN), found {} (or pairN, predN: a register pair, a predicate)", p.peek().describe()));
        let Tok::Ident(s) = self.peek().clone() else { return bad(self) };
        let split = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
        let (kind, digits) = s.split_at(split);
        let Ok(w) = digits.parse::<u32>() else { return bad(self) };
        let (ty, form) = match kind {
            "bv" => (Ty::Bv(w), Form::Plain),
            "mask" => (Ty::Mask(w), Form::Plain),
            "imm" => (Ty::Imm(w), Form::Plain),
            "pair" => (Ty::Bv(w.saturating_mul(2)), Form::Pair),
            "pred" => (Ty::Mask(w), Form::Pred),
            _ => return bad(self),
        };
        if w == 0 || ty.width() > crate::bitvec::MAX_WIDTH {
            return self.err(span, format!("type `{s}` is {} bits wide; widths are 1 to {}", ty.width(), crate::bitvec::MAX_WIDTH));
        }
        self.bump();
        Ok((ty, form))
    }

    /// A type, or in a generic instruction `bv(EXPR)`.
    fn sized_ty(&mut self, generic: bool) -> PResult<(Ty, Form, Option<Expr>)> {
        if self.is_kw("bv") && *self.peek_at(1) == Tok::LParen {
            let span = self.span();
            if !generic {
                return self.err(span, "`bv(...)` needs generic parameters: write `instr NAME<E, N>(...)`");
            }
            self.bump();
            self.bump();
            let e = self.expr()?;
            self.expect(Tok::RParen, "`)` after the width")?;
            return Ok((Ty::Bv(0), Form::Plain, Some(e)));
        }
        let (ty, form) = self.formed_ty()?;
        Ok((ty, form, None))
    }

    fn generics(&mut self) -> PResult<Vec<String>> {
        if !matches!(self.peek(), Tok::Cmp { op: CmpTok::Lt, .. }) {
            return Ok(Vec::new());
        }
        if let Tok::Cmp { signed: Some(_), .. } = self.peek() {
            return self.err(self.span(), "generic parameters are written in upper case, e.g. `<S, E, N>`");
        }
        self.bump();
        let mut gs: Vec<String> = Vec::new();
        loop {
            let (g, span) = self.name("a generic parameter")?;
            if !g.starts_with(|c: char| c.is_ascii_uppercase()) {
                return self.err(span, format!("generic parameter `{g}` must start with an upper-case letter"));
            }
            if gs.contains(&g) {
                return self.err(span, format!("generic parameter `{g}` is declared twice"));
            }
            gs.push(g);
            match self.peek() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::Cmp { op: CmpTok::Gt, signed: None } => {
                    self.bump();
                    return Ok(gs);
                }
                _ => return self.unexpected("`,` or `>`"),
            }
        }
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.params_of(false)
    }

    fn params_of(&mut self, generic: bool) -> PResult<Vec<Param>> {
        self.expect(Tok::LParen, "`(`")?;
        let mut ps: Vec<Param> = Vec::new();
        if *self.peek() != Tok::RParen {
            loop {
                let (name, span) = self.name("a parameter name")?;
                if ps.iter().any(|p| p.name == name) || name == "dst" {
                    return self.err(span, format!("parameter `{name}` is declared twice or shadows `dst`"));
                }
                self.expect(Tok::Colon, "`:` and a type")?;
                let (ty, form, size) = self.sized_ty(generic)?;
                let range = self.imm_range(ty)?;
                ps.push(Param { name, ty, size, range, form, span });
                if *self.peek() == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        self.expect(Tok::RParen, "`,` or `)`")?;
        Ok(ps)
    }

    /// `in LO to HI` after an immediate's type: the values it may take.
    fn imm_range(&mut self, ty: Ty) -> PResult<Option<(u64, u64)>> {
        if !self.is_kw("in") {
            return Ok(None);
        }
        let span = self.span();
        let Ty::Imm(w) = ty else {
            return self.err(span, format!("only an immediate (immN) takes a range, not {ty}"));
        };
        self.bump();
        let bound = |p: &mut Self| match *p.peek() {
            Tok::Num(n) => {
                p.bump();
                Ok(n)
            }
            _ => p.unexpected("a bound of the immediate's range"),
        };
        let lo = bound(self)?;
        self.expect_kw("to")?;
        let hi = bound(self)?;
        let max = if w >= 64 { i128::from(u64::MAX) } else { (1i128 << w) - 1 };
        if lo < 0 || lo > hi || hi > max {
            return self.err(span, format!("range {lo} to {hi} is empty or does not fit imm{w} (0 to {max})"));
        }
        Ok(Some((lo as u64, hi as u64)))
    }

    fn instr(&mut self) -> PResult<Instr> {
        let span = self.expect_kw("instr")?;
        let (name, _) = self.name("an intrinsic name")?;
        let generics = self.generics()?;
        let params = self.params_of(!generics.is_empty())?;
        self.expect(Tok::Arrow, "`->` and a result type")?;
        let (ret, ret_form, ret_size) = self.sized_ty(!generics.is_empty())?;
        self.expect(Tok::LBracket, "`[target feature mnemonic]`")?;
        let (target, target_span) = self.name("a target name (x86, arm, hvx or halide)")?;
        let Some((known, example)) = target_features(&target) else {
            return self.err(target_span, format!("unknown target `{target}` (expected x86, arm, hvx or halide)"));
        };
        let mut features = Vec::new();
        loop {
            let what = if features.is_empty() { format!("{} feature (e.g. {example})", article(&target)) } else { format!("{} feature after `+`", article(&target)) };
            let (f, span) = self.name(&what)?;
            if !known.contains(&f.as_str()) {
                return self.err(span, format!("unknown {target} feature `{f}` (expected one of {})", known.join(", ")));
            }
            features.push(f);
            if *self.peek() != Tok::Plus {
                break;
            }
            self.bump();
        }
        let (mnemonic, _) = self.name("an instruction mnemonic")?;
        self.expect(Tok::RBracket, "`]`")?;
        self.end_of_line()?;
        let cost = if self.is_kw("cost") { Some(self.cost()?) } else { None };
        let body = self.block(&["instr", "def"], "instr")?;
        Ok(Instr {
            name,
            params,
            ret,
            ret_form,
            target,
            features,
            mnemonic,
            cost,
            body,
            span,
            file: self.file.clone(),
            family: self.family.clone(),
            generics,
            ret_size,
            bindings: Vec::new(),
        })
    }

    fn number(&mut self, what: &str) -> PResult<f64> {
        match *self.peek() {
            Tok::Num(n) => {
                self.bump();
                Ok(n as f64)
            }
            Tok::Decimal(d) => {
                self.bump();
                Ok(d)
            }
            _ => self.unexpected(what),
        }
    }

    fn cost(&mut self) -> PResult<Cost> {
        self.expect_kw("cost")?;
        self.expect_kw("latency")?;
        let latency = self.number("a latency in cycles")?;
        self.expect_kw("throughput")?;
        let throughput = self.number("a reciprocal throughput in cycles")?;
        self.expect_kw("source")?;
        let Tok::Str(source) = self.peek().clone() else { return self.unexpected("a quoted source") };
        self.bump();
        self.end_of_line()?;
        Ok(Cost { latency, throughput, source })
    }

    fn def(&mut self) -> PResult<Def> {
        let span = self.expect_kw("def")?;
        let (name, _) = self.name("a function name")?;
        let params = self.params()?;
        self.expect(Tok::Arrow, "`->` and a result type")?;
        let ret = self.ty()?;
        self.end_of_line()?;
        let body = self.block(&["instr", "def"], "def")?;
        Ok(Def { name, params, ret, body, span, file: self.file.clone() })
    }

    /// Statements up to (not including) one of `enders`. At top level the
    /// end of file also ends the block.
    fn block(&mut self, enders: &[&str], opener: &str) -> PResult<Vec<Stmt>> {
        let top = opener == "instr" || opener == "def";
        let mut out = Vec::new();
        loop {
            self.skip_newlines();
            if enders.iter().any(|k| self.is_kw(k)) {
                return Ok(out);
            }
            if *self.peek() == Tok::Eof {
                if top {
                    return Ok(out);
                }
                return self.unexpected(&format!("{} to close {opener}", enders.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" or ")));
            }
            if !top && (self.is_kw("instr") || self.is_kw("def")) {
                return self.unexpected(&format!("{} to close {opener}", enders.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" or ")));
            }
            if let Some(Stmt::Return { span, .. }) = out.last() {
                let span = *span;
                return self.err(span, "RETURN must be the last statement of its block");
            }
            out.push(self.stmt()?);
            // A statement ends at the end of its line, or right before a closer
            // so that `IF c THEN x := 1 ELSE x := 2 FI` fits on one line.
            if !matches!(self.peek(), Tok::Newline | Tok::Eof) && !["ELSE", "FI", "ENDFOR"].iter().any(|k| self.is_kw(k)) {
                return self.unexpected("end of line");
            }
        }
    }

    /// Runs `f` one block deeper, or fails if that is too deep.
    fn nested_block<T>(&mut self, span: Span, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.blocks >= MAX_BLOCK_NESTING {
            return self.err(span, format!("FOR and IF blocks (and ELSE IF arms) nested more than {MAX_BLOCK_NESTING} deep"));
        }
        self.blocks += 1;
        let r = f(self);
        self.blocks -= 1;
        r
    }

    fn too_deep() -> String {
        format!("expression nested more than {MAX_NESTING} deep (each operator of a chain and each index counts); split it with a local variable")
    }

    /// Runs `f` one expression level deeper, or fails if that is too deep.
    fn nested_expr<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            return self.err(self.span(), Self::too_deep());
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let span = self.span();
        if self.is_kw("FOR") {
            return self.nested_block(span, Self::for_stmt);
        }
        if self.is_kw("IF") {
            return self.nested_block(span, Self::if_stmt);
        }
        if self.eat_kw("RETURN") {
            let value = self.expr()?;
            return Ok(Stmt::Return { value, span });
        }
        for kw in ["ENDFOR", "FI", "ELSE", "THEN"] {
            if self.is_kw(kw) {
                return self.err(span, format!("`{kw}` without a matching opener"));
            }
        }
        let (name, nspan) = self.name("a statement (FOR, IF, RETURN or an assignment)")?;
        let half = self.half()?;
        let index = if *self.peek() == Tok::LBracket { Some(self.index()?) } else { None };
        self.expect(Tok::Assign, "`:=`")?;
        let value = self.expr()?;
        Ok(Stmt::Assign { target: LValue { name, half, index, span: nspan }, value, span })
    }

    /// `.lo` or `.hi` after a name: a half of a vector pair.
    fn half(&mut self) -> PResult<Option<bool>> {
        if *self.peek() != Tok::Dot {
            return Ok(None);
        }
        self.bump();
        match self.peek().clone() {
            Tok::Ident(s) if s == "lo" || s == "hi" => {
                self.bump();
                Ok(Some(s == "hi"))
            }
            _ => self.unexpected("`lo` or `hi` after `.` (the halves of a vector pair)"),
        }
    }

    fn for_stmt(&mut self) -> PResult<Stmt> {
        let span = self.span();
        if self.eat_kw("FOR") {
            let (var, _) = self.name("a loop variable")?;
            self.expect(Tok::Assign, "`:=`")?;
            let from = self.expr()?;
            let down = if self.eat_kw("to") {
                false
            } else if self.eat_kw("downto") {
                true
            } else {
                return self.unexpected("`to` or `downto`");
            };
            let to = self.expr()?;
            self.end_of_line()?;
            let opener = format!("FOR opened at {}:{}", span.line, span.col);
            let body = self.block(&["ENDFOR"], &opener)?;
            self.expect_kw("ENDFOR")?;
            return Ok(Stmt::For { var, from, to, down, body, span });
        }
        self.unexpected("`FOR`")
    }

    fn if_stmt(&mut self) -> PResult<Stmt> {
        let span = self.expect_kw("IF")?;
        let cond = self.expr()?;
        self.eat_kw("THEN");
        let opener = format!("IF opened at {}:{}", span.line, span.col);
        let then = self.block(&["ELSE", "FI"], &opener)?;
        let els = if self.eat_kw("ELSE") {
            if self.is_kw("IF") {
                // `ELSE IF` shares the closing FI; its arm nests one deeper.
                let inner = self.nested_block(self.span(), Self::if_stmt)?;
                return Ok(Stmt::If { cond, then, els: vec![inner], span });
            }
            let els = self.block(&["FI"], &opener)?;
            self.expect_kw("FI")?;
            els
        } else {
            self.expect_kw("FI")?;
            Vec::new()
        };
        Ok(Stmt::If { cond, then, els, span })
    }

    fn index(&mut self) -> PResult<Index> {
        self.nested_expr(Self::index_inner)
    }

    fn index_inner(&mut self) -> PResult<Index> {
        self.expect(Tok::LBracket, "`[`")?;
        let hi = self.or_expr()?;
        let idx = if *self.peek() == Tok::Colon {
            self.bump();
            let lo = self.or_expr()?;
            Index::Range(Box::new(hi), Box::new(lo))
        } else {
            Index::Bit(Box::new(hi))
        };
        self.expect(Tok::RBracket, "`:` or `]`")?;
        Ok(idx)
    }

    pub fn expr(&mut self) -> PResult<Expr> {
        self.nested_expr(Self::expr_inner)
    }

    fn expr_inner(&mut self) -> PResult<Expr> {
        let c = self.or_expr()?;
        if *self.peek() == Tok::Question {
            let span = self.bump().span;
            let t = self.expr()?;
            self.expect(Tok::Colon, "`:` in `c ? a : b`")?;
            let e = self.expr()?;
            return Ok(Expr { kind: ExprKind::Ternary(Box::new(c), Box::new(t), Box::new(e)), span });
        }
        Ok(c)
    }

    fn binary_level(&mut self, next: fn(&mut Self) -> PResult<Expr>, ops: fn(&Tok) -> Option<BinOp>) -> PResult<Expr> {
        let base = self.depth;
        let r = self.binary_chain(next, ops);
        self.depth = base;
        r
    }

    /// Each operator deepens the (left-leaning) tree by one, so it takes a
    /// level of the nesting budget until the chain ends.
    fn binary_chain(&mut self, next: fn(&mut Self) -> PResult<Expr>, ops: fn(&Tok) -> Option<BinOp>) -> PResult<Expr> {
        let mut lhs = next(self)?;
        while let Some(op) = ops(self.peek()) {
            if self.depth >= MAX_NESTING {
                return self.err(self.span(), Self::too_deep());
            }
            self.depth += 1;
            let span = self.bump().span;
            let rhs = next(self)?;
            lhs = Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span };
        }
        Ok(lhs)
    }

    // The words AND/OR/XOR combine conditions, looser than comparisons as
    // the manuals use them; the symbols bind tighter, so `j & 1 == 0` means
    // `(j & 1) == 0` rather than C's reading.
    fn or_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::xor_expr, |t| matches!(t, Tok::Ident(s) if s == "OR").then_some(BinOp::Or))
    }
    fn xor_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::and_expr, |t| matches!(t, Tok::Ident(s) if s == "XOR").then_some(BinOp::Xor))
    }
    fn and_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::cmp_expr, |t| matches!(t, Tok::Ident(s) if s == "AND").then_some(BinOp::And))
    }
    fn bor_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::bxor_expr, |t| (*t == Tok::Pipe).then_some(BinOp::Or))
    }
    fn bxor_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::band_expr, |t| (*t == Tok::Caret).then_some(BinOp::Xor))
    }
    fn band_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::shift_expr, |t| (*t == Tok::Amp).then_some(BinOp::And))
    }
    fn cmp_expr(&mut self) -> PResult<Expr> {
        let lhs = self.bor_expr()?;
        let op = match self.peek() {
            Tok::Eq => BinOp::Eq,
            Tok::Ne => BinOp::Ne,
            Tok::Cmp { op, signed } => match op {
                CmpTok::Lt => BinOp::Lt { signed: *signed },
                CmpTok::Le => BinOp::Le { signed: *signed },
                CmpTok::Gt => BinOp::Gt { signed: *signed },
                CmpTok::Ge => BinOp::Ge { signed: *signed },
            },
            _ => return Ok(lhs),
        };
        let span = self.bump().span;
        let rhs = self.bor_expr()?;
        if matches!(self.peek(), Tok::Eq | Tok::Ne | Tok::Cmp { .. }) {
            return self.err(self.span(), "comparisons do not chain; add parentheses");
        }
        Ok(Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span })
    }
    fn shift_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::add_expr, |t| match t {
            Tok::Shl => Some(BinOp::Shl),
            Tok::Shr { signed: false } => Some(BinOp::LShr),
            Tok::Shr { signed: true } => Some(BinOp::AShr),
            _ => None,
        })
    }
    fn add_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::mul_expr, |t| match t {
            Tok::Plus => Some(BinOp::Add),
            Tok::Minus => Some(BinOp::Sub),
            _ => None,
        })
    }
    fn mul_expr(&mut self) -> PResult<Expr> {
        self.binary_level(Self::unary_expr, |t| match t {
            Tok::Star => Some(BinOp::Mul),
            Tok::UDiv => Some(BinOp::UDiv),
            Tok::URem => Some(BinOp::URem),
            _ => None,
        })
    }
    fn unary_expr(&mut self) -> PResult<Expr> {
        let span = self.span();
        if self.depth >= MAX_NESTING {
            return self.err(span, Self::too_deep());
        }
        let op = match self.peek() {
            Tok::Minus => UnOp::Neg,
            Tok::Tilde => UnOp::Not,
            Tok::Ident(s) if s == "NOT" => UnOp::Not,
            _ => return self.postfix_expr(),
        };
        self.bump();
        self.depth += 1;
        let e = self.unary_expr();
        self.depth -= 1;
        Ok(Expr { kind: ExprKind::Unary(op, Box::new(e?)), span })
    }
    fn postfix_expr(&mut self) -> PResult<Expr> {
        let base = self.depth;
        let r = self.postfix_chain();
        self.depth = base;
        r
    }
    /// `x[a][b]..`: like an operator chain, each index deepens the tree.
    fn postfix_chain(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        while *self.peek() == Tok::LBracket {
            let span = self.span();
            let idx = self.index()?;
            self.depth += 1;
            e = Expr { kind: ExprKind::Index(Box::new(e), idx), span };
        }
        Ok(e)
    }
    fn primary(&mut self) -> PResult<Expr> {
        let span = self.span();
        match self.peek().clone() {
            Tok::Num(n) => {
                self.bump();
                Ok(Expr { kind: ExprKind::Num(n), span })
            }
            Tok::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                Ok(e)
            }
            Tok::Ident(s) if !KEYWORDS.contains(&s.as_str()) => {
                self.bump();
                if *self.peek() == Tok::LParen && matches!(self.peek_at(0), Tok::LParen) {
                    self.bump();
                    let mut args = Vec::new();
                    if *self.peek() != Tok::RParen {
                        loop {
                            args.push(self.expr()?);
                            if *self.peek() == Tok::Comma {
                                self.bump();
                            } else {
                                break;
                            }
                        }
                    }
                    self.expect(Tok::RParen, "`,` or `)` after an argument")?;
                    return Ok(Expr { kind: ExprKind::Call(s, args), span });
                }
                if let Some(hi) = self.half()? {
                    return Ok(Expr { kind: ExprKind::Half(s, hi), span });
                }
                Ok(Expr { kind: ExprKind::Var(s), span })
            }
            _ => self.unexpected("an expression"),
        }
    }
}
