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
    let mut items = Vec::new();
    for_each_sexp(file, src, |x| items.push(x))?;
    Ok(items)
}

/// [`parse_sexps`], handing each top-level item to `each` as soon as it is
/// read, so that a caller that converts and drops items never holds the
/// whole tree: x86.egg's is 11 MB. Reads the text in place (a `Vec<char>`
/// of it was 6 MB more).
pub fn for_each_sexp(file: &str, src: &str, mut each: impl FnMut(Sexp)) -> Result<(), Diagnostic> {
    let bytes = src.as_bytes();
    // The character at byte `i` (on a character boundary) and its length.
    let at = |i: usize| -> (char, usize) {
        let c = src[i..].chars().next().expect("in the text");
        (c, c.len_utf8())
    };
    let delimits = |c: char| c.is_whitespace() || matches!(c, '(' | ')' | ';' | '"');
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    // The lists open, outermost first; top-level items go to `each`.
    let mut stack: Vec<(Vec<Sexp>, Span)> = Vec::new();
    let mut push = |stack: &mut Vec<(Vec<Sexp>, Span)>, x: Sexp| match stack.last_mut() {
        Some((items, _)) => items.push(x),
        None => each(x),
    };
    while i < bytes.len() {
        let (c, len) = at(i);
        let span = Span { line, col };
        match c {
            '\n' => {
                line += 1;
                col = 1;
                i += 1;
                continue;
            }
            ';' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            c if c.is_whitespace() => {
                i += len;
                col += 1;
                continue;
            }
            '(' if stack.len() >= MAX_NESTING => {
                return Err(Diagnostic::new(file, span, format!("lists nested more than {MAX_NESTING} deep")));
            }
            '(' => stack.push((Vec::new(), span)),
            ')' => {
                let Some((items, s)) = stack.pop() else {
                    return Err(Diagnostic::new(file, span, "unbalanced `)`: no list is open"));
                };
                push(&mut stack, Sexp::List(items, s));
            }
            '"' => {
                let close = src[i + 1..].find(['"', '\n']).map(|k| i + 1 + k);
                let Some(j) = close.filter(|&j| bytes[j] == b'"') else {
                    return Err(Diagnostic::new(file, span, "unterminated string; expected a closing `\"` on the same line"));
                };
                let text = &src[i + 1..j];
                push(&mut stack, Sexp::Str(text.to_string(), span));
                col += text.chars().count() as u32 + 1;
                i = j;
            }
            _ => {
                let mut j = i + len;
                while j < bytes.len() && !delimits(at(j).0) {
                    j += at(j).1;
                }
                let text = &src[i..j];
                push(&mut stack, Sexp::Atom(text.to_string(), span));
                col += text.chars().count() as u32 - 1;
                i = j - 1;
            }
        }
        i += 1;
        col += 1;
    }
    if let Some((_, open)) = stack.last() {
        return Err(Diagnostic::new(file, Span { line, col }, format!("unbalanced `(`: the list opened at {}:{} is never closed", open.line, open.col)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_characters_not_bytes() {
        // `é` is two bytes; U+00A0 is whitespace of two bytes.
        let items = parse_sexps("t.egg", "(é \"ü\"\u{a0}b)\n ; c\n (x)").unwrap();
        let Sexp::List(xs, s) = &items[0] else { panic!("a list") };
        assert_eq!((s.line, s.col), (1, 1));
        assert_eq!(xs[0], Sexp::Atom("é".into(), Span { line: 1, col: 2 }));
        assert_eq!(xs[1], Sexp::Str("ü".into(), Span { line: 1, col: 4 }));
        assert_eq!(xs[2], Sexp::Atom("b".into(), Span { line: 1, col: 8 }));
        assert_eq!(items[1].span(), Span { line: 3, col: 2 });
    }

    #[test]
    fn errors_name_where() {
        let e = parse_sexps("t.egg", "(a\n (b)").unwrap_err();
        assert!(e.to_string().contains("the list opened at 1:1 is never closed"), "{e}");
        let e = parse_sexps("t.egg", "(a))").unwrap_err();
        assert_eq!(e.span, Span { line: 1, col: 4 });
        let e = parse_sexps("t.egg", "(a \"b\n\")").unwrap_err();
        assert!(e.to_string().contains("unterminated string"), "{e}");
    }
}
