//! The s-expression reader under rule files: atoms, strings and lists,
//! each with its `line:col`.

use misaal_isa::{Diagnostic, diag::Span};

#[derive(Clone, Debug, PartialEq)]
pub enum Sexp {
    Atom(String, Span),
    Str(String, Span),
    List(Vec<Sexp>, Span),
}

impl Sexp {
    pub fn span(&self) -> Span {
        match self {
            Sexp::Atom(_, s) | Sexp::Str(_, s) | Sexp::List(_, s) => *s,
        }
    }
    pub(crate) fn describe(&self) -> String {
        match self {
            Sexp::Atom(a, _) => format!("`{a}`"),
            Sexp::Str(s, _) => format!("string {s:?}"),
            Sexp::List(..) => "a list".into(),
        }
    }
}

/// Lists nest at most this deep: the parser, the rule checker and dropping
/// the tree all recurse on the nesting. Rules nest about 8 deep.
pub const MAX_NESTING: usize = 200;

pub fn parse_sexps(file: &str, src: &str) -> Result<Vec<Sexp>, Diagnostic> {
    let chars: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let mut stack: Vec<(Vec<Sexp>, Span)> = vec![(Vec::new(), Span { line: 1, col: 1 })];
    while i < chars.len() {
        let c = chars[i];
        let span = Span { line, col };
        match c {
            '\n' => {
                line += 1;
                col = 1;
                i += 1;
                continue;
            }
            ';' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            c if c.is_whitespace() => {}
            '(' if stack.len() > MAX_NESTING => {
                return Err(Diagnostic::new(file, span, format!("lists nested more than {MAX_NESTING} deep")));
            }
            '(' => stack.push((Vec::new(), span)),
            ')' => {
                if stack.len() == 1 {
                    return Err(Diagnostic::new(file, span, "unbalanced `)`: no list is open"));
                }
                let (items, s) = stack.pop().expect("open list");
                stack.last_mut().expect("outer").0.push(Sexp::List(items, s));
            }
            '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' && chars[j] != '\n' {
                    j += 1;
                }
                if j >= chars.len() || chars[j] != '"' {
                    return Err(Diagnostic::new(file, span, "unterminated string; expected a closing `\"` on the same line"));
                }
                let s: String = chars[i + 1..j].iter().collect();
                stack.last_mut().expect("outer").0.push(Sexp::Str(s, span));
                col += (j - i) as u32;
                i = j;
            }
            _ => {
                let mut j = i;
                while j < chars.len() && !chars[j].is_whitespace() && !matches!(chars[j], '(' | ')' | ';' | '"') {
                    j += 1;
                }
                let a: String = chars[i..j].iter().collect();
                stack.last_mut().expect("outer").0.push(Sexp::Atom(a, span));
                col += (j - i - 1) as u32;
                i = j - 1;
            }
        }
        i += 1;
        col += 1;
    }
    if stack.len() > 1 {
        let open = stack.last().expect("open").1;
        return Err(Diagnostic::new(file, Span { line, col }, format!("unbalanced `(`: the list opened at {}:{} is never closed", open.line, open.col)));
    }
    Ok(stack.pop().expect("top").0)
}

