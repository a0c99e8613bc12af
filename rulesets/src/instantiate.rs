//! Instantiation: the assignments of a rule's numeric variables that meet
//! its side conditions (with default domains by name), and the expansion of
//! `{var}` / `{mm}` templates in instruction names.

use crate::ast::{Cond, IntExpr, Rule};

/// Vector widths x86 has; the default domain of `?vsize*` in an x86 file
/// (the registry's `misaal_targets::X86.vector_widths`, as an array).
pub const X86_VECTOR_WIDTHS: [i128; 3] = {
    let w = misaal_targets::X86.vector_widths;
    [w[0], w[1], w[2]]
};

/// Template keys that are not variables: `{mm}` (x86: `mm`, `mm256`,
/// `mm512` by `?vsize*`), `{q}` (ARM: empty for a 64-bit `?vsize*`, `q` for
/// 128), `{su}` (ARM type suffixes: `s` when `?sign` is 1, `u` when 0) and
/// `{ty}` (HVX element types: `b`, `h`, `w` for signed `?bw` 8, 16, 32, and
/// `ub`, `uh`, `uw` unsigned) and `{e}` (HVX element letters without a
/// sign: `b`, `h`, `w` by `?bw`). `{su2}` reads `?sign2`, `{ty2}` reads
/// `?sign2` and `?bw2`, `{e2}` reads `?bw2`, and so on for any suffix of
/// digits.
pub const TEMPLATE_KEYS: [&str; 5] = ["mm", "q", "su", "ty", "e"];

/// Whether a `{key}` is a spelled template rather than a variable.
pub fn is_template_key(key: &str) -> bool {
    ["mm", "q"].contains(&key) || ["su", "ty", "e"].iter().any(|p| key.strip_prefix(p).is_some_and(|d| d.chars().all(|c| c.is_ascii_digit())))
}

pub type Assignment = Vec<(std::sync::Arc<str>, i128)>;

/// Assignments one rule may have. Each is proved on its own, so a rule
/// needs far fewer; the bundled rules have at most a dozen.
pub const MAX_INSTANTIATIONS: usize = 10_000;
/// Condition evaluations one rule's instantiation may take (assignments
/// times the work of each). The bundled rules take a few hundred.
pub const MAX_INSTANTIATION_WORK: usize = 1_000_000;

/// Every assignment of the rule's numeric variables that satisfies its
/// side conditions.
pub fn instantiations(rule: &Rule, vector_widths: &[i128]) -> Result<Vec<Assignment>, String> {
    let vars = rule.numeric_vars();
    let defined: Vec<&str> = rule.conds.iter().filter_map(|c| if let Cond::Define(v, _) = c { Some(v.as_str()) } else { None }).collect();
    let mut domains: Vec<(String, Vec<i128>)> = Vec::new();
    for v in &vars {
        let declared: Option<Vec<i128>> = rule.conds.iter().find_map(|c| if let Cond::In(x, vals) = c { (x == v).then(|| vals.clone()) } else { None });
        let dom = match declared {
            Some(d) => d,
            None if defined.contains(&v.as_str()) => continue,
            None if v.starts_with("bw") => vec![8, 16, 32, 64],
            None if v.starts_with("vsize") => vector_widths.to_vec(),
            None if v.starts_with("sign") => vec![0, 1],
            None => return Err(format!("?{v} has no values: give it (in ?{v} ...), (range ?{v} LO HI) or (= ?{v} EXPR), or name it ?bw*, ?vsize* or ?sign*")),
        };
        domains.push((v.clone(), dom));
    }
    let mut out = Vec::new();
    let Some(total) = domains.iter().try_fold(1usize, |acc, (_, d)| acc.checked_mul(d.len()).filter(|&t| t <= MAX_INSTANTIATIONS)) else {
        return Err(format!("more than {MAX_INSTANTIATIONS} instantiations; narrow the domains"));
    };
    // Each assignment evaluates the definitions until they settle (up to
    // defs^2) and every comparison; bound the product, not only the count.
    let n_defs = rule.conds.iter().filter(|c| matches!(c, Cond::Define(..))).count();
    let per_env = n_defs * (n_defs + 1) + rule.conds.len() + domains.len() + 1;
    if total.saturating_mul(per_env) > MAX_INSTANTIATION_WORK {
        return Err(format!(
            "{total} instantiations of {per_env} steps each is more than {MAX_INSTANTIATION_WORK} steps; narrow the domains or use fewer conditions"
        ));
    }
    let defs: Vec<(&String, &IntExpr)> = rule.conds.iter().filter_map(|c| if let Cond::Define(v, e) = c { Some((v, e)) } else { None }).collect();
    // Names borrowed while a candidate is checked: most fail a condition,
    // and copying their names was most of the time.
    let mut env: Vec<(&str, i128)> = Vec::with_capacity(domains.len() + defs.len());
    // Each name once, shared by every assignment kept: a String per entry
    // was a third of the assignments' memory.
    let shared: Vec<(&str, std::sync::Arc<str>)> = domains.iter().map(|(v, _)| v.as_str()).chain(defs.iter().map(|(v, _)| v.as_str())).map(|v| (v, std::sync::Arc::from(v))).collect();
    let share = |n: &str| shared.iter().find(|(v, _)| *v == n).map_or_else(|| std::sync::Arc::from(n), |(_, a)| a.clone());
    for k in 0..total {
        env.clear();
        let mut r = k;
        for (v, d) in &domains {
            env.push((v.as_str(), d[r % d.len()]));
            r /= d.len();
        }
        // Definitions may depend on one another: evaluate until all are bound.
        let mut ok = true;
        for _ in 0..=defs.len() {
            for (v, e) in &defs {
                if let Some(x) = e.value(&env) {
                    match env.iter().find(|(n, _)| n == v) {
                        Some((_, have)) if *have != x => ok = false,
                        Some(_) => {}
                        None => env.push((v.as_str(), x)),
                    }
                }
            }
        }
        if defs.iter().any(|(v, _)| !env.iter().any(|(n, _)| n == *v)) {
            ok = false;
        }
        for c in &rule.conds {
            if !ok {
                break;
            }
            if let Cond::Cmp(op, a, b) = c {
                match (a.value(&env), b.value(&env)) {
                    (Some(x), Some(y)) => {
                        let holds = match op.as_str() {
                            "=" => x == y,
                            "!=" => x != y,
                            "<" => x < y,
                            "<=" => x <= y,
                            ">" => x > y,
                            _ => x >= y,
                        };
                        ok &= holds;
                    }
                    _ => ok = false,
                }
            }
        }
        if ok {
            out.push(env.iter().map(|&(n, x)| (share(n), x)).collect());
        }
    }
    Ok(out)
}

/// `bw=16,vsize=256,n=16`: element width first, then vector width, then
/// the rest in order of appearance.
pub fn describe_env(env: &Assignment) -> String {
    if env.is_empty() {
        return "-".into();
    }
    let rank = |v: &str| if v.starts_with("bw") { 0 } else if v.starts_with("vsize") { 1 } else { 2 };
    let mut e: Vec<&(std::sync::Arc<str>, i128)> = env.iter().collect();
    e.sort_by_key(|(v, _)| rank(v));
    e.iter().map(|(v, x)| format!("{v}={x}")).collect::<Vec<_>>().join(",")
}

/// An instruction name with its templates filled in: `{v}` takes the value
/// of `?v`; `{mm}`, `{q}`, `{su}` and `{ty}` are spelled from `?vsize*`,
/// `?sign` and `?bw` (see [`TEMPLATE_KEYS`]).
pub fn expand_name(name: &str, env: &Assignment) -> Result<String, String> {
    // One pass over the name, looking each `{var}` up: a long template is
    // expanded once per instantiation, so this is linear in its length.
    let mut n = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('{') {
        n.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            n.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let key = &after[..close];
        if let Some((_, x)) = env.iter().find(|(v, _)| &**v == key) {
            n.push_str(&x.to_string());
        } else if key == "mm" || key == "q" {
            let vs = env.iter().find(|(v, _)| v.starts_with("vsize")).map(|(_, x)| *x).ok_or_else(|| format!("{{{key}}} needs a ?vsize variable"))?;
            n.push_str(match (key, vs) {
                ("mm", 128) => "mm",
                ("mm", 256) => "mm256",
                ("mm", 512) => "mm512",
                ("q", 64) => "",
                ("q", 128) => "q",
                _ => return Err(format!("{{{key}}} has no form for ?vsize={vs}")),
            });
        } else if is_template_key(key) {
            let suffix = key.trim_start_matches(|c: char| c.is_ascii_alphabetic());
            let get = |name: &str| {
                let name = format!("{name}{suffix}");
                env.iter().find(|(v, _)| **v == *name).map(|(_, x)| *x).ok_or_else(|| format!("{{{key}}} needs ?{name}"))
            };
            let sign = if key.starts_with('e') { 1 } else { get("sign")? };
            if key.starts_with("su") {
                n.push_str(match sign {
                    0 => "u",
                    1 => "s",
                    s => return Err(format!("{{su}} needs ?sign 0 or 1, not {s}")),
                });
            } else {
                let letter = match get("bw")? {
                    8 => "b",
                    16 => "h",
                    32 => "w",
                    b => return Err(format!("{{{key}}} has no HVX element type for ?bw{suffix}={b}")),
                };
                n.push_str(if sign == 0 { "u" } else { "" });
                n.push_str(letter);
            }
        } else {
            // Not a variable: kept, and reported below.
            n.push('{');
            rest = after;
            continue;
        }
        rest = &after[close + 1..];
    }
    n.push_str(rest);
    if let Some(open) = n.find('{') {
        return Err(format!("`{n}` still has a template at byte {open}: no variable fills it"));
    }
    Ok(n)
}

/// A Halide op's generic parameters, read from the leading arguments of its
/// term at one instantiation: a type `(i E N)` fills three (`<S, E, N>`), an
/// integer or a numeric variable fills one. Returns the `need` values and
/// how many arguments they took; the rest are operands.
pub fn op_generics(op: &str, args: &[crate::ast::Term], need: usize, env: &Assignment, numeric: &[String]) -> Result<(Vec<i128>, usize), String> {
    use crate::ast::Term;
    let mut generics = Vec::new();
    let mut used = 0;
    for a in args {
        if generics.len() >= need {
            break;
        }
        match a {
            Term::Type(s, e, n, _) => {
                for x in [s, e, n] {
                    generics.push(x.eval(env)?);
                }
            }
            Term::Int(e, _) => generics.push(e.eval(env)?),
            Term::Var(v, _) if numeric.contains(v) => generics.push(IntExpr::Var(v.clone()).eval(env)?),
            _ => break,
        }
        used += 1;
    }
    if generics.len() != need {
        return Err(format!("`{op}` needs {need} generic parameter(s) before its operands, given {}", generics.len()));
    }
    Ok((generics, used))
}
