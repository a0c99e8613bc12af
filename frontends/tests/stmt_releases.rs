//! Stmt as Halide 14 to 18 printed it (`tests/stmt_releases/halideN/*.stmt`,
//! table in `docs/stmt-releases.md`). Every fixture opens with
//! `# release: Halide N` (its folder's N), `# forms: ID ...` (the older
//! forms it holds; each must occur in its text and be a row of the table)
//! and may say `# same-as: PATH`, a current-release Stmt of the same kernel:
//! both must parse to the same functions, so the older forms read as what
//! the current ones do. `rounding_halving_sub`, which no current release
//! prints, is checked on the reference interpreter instead.

use misaal_frontends::interp::{ArgValue, Buffer, Interp};
use misaal_frontends::stmt::{Module, Type, parse_module};
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/stmt_releases");

/// Each form a fixture may name, and text only that form has.
const FORMS: &[(&str, &str)] = &[
    ("reinterpret-call", ")reinterpret("),
    ("reinterpret-template", "reinterpret<"),
    ("plain-handle", "(halide_buffer_t *)"),
    ("struct-handle", "(struct halide_buffer_t *)"),
    ("vector-reduce-op", "vector_reduce("),
    ("make-typed-struct", "make_typed_struct("),
    ("load-typed-struct-member", "load_typed_struct_member("),
    ("rounding-halving-sub", "rounding_halving_sub("),
    ("aligned", " aligned("),
    ("foreign-target", "target=arm-64-osx-arm_dot_prod"),
];

fn fixtures() -> Vec<(u32, PathBuf)> {
    let mut v = Vec::new();
    for release in 14..=18 {
        let dir = Path::new(FIXTURES).join(format!("halide{release}"));
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "stmt") {
                v.push((release, e.path()));
            }
        }
    }
    v.sort();
    v
}

fn header<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().take_while(|l| l.starts_with('#')).find_map(|l| l.strip_prefix(&format!("# {key}: ")))
}

fn load(path: &Path) -> Module {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_module(&path.display().to_string(), &text).unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn every_older_form_has_a_fixture_that_parses_and_reads_as_the_current_form() {
    let all = fixtures();
    let table = std::fs::read_to_string(format!("{ROOT}/docs/stmt-releases.md")).unwrap();
    let mut seen = std::collections::BTreeSet::<String>::new();
    let mut bad = Vec::new();
    for (release, path) in &all {
        let text = std::fs::read_to_string(path).unwrap();
        let body: String = text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
        let name = path.display();
        if header(&text, "release") != Some(&format!("Halide {release}")) {
            bad.push(format!("{name}: no `# release: Halide {release}` line"));
        }
        let forms = header(&text, "forms").unwrap_or_default();
        if forms.is_empty() {
            bad.push(format!("{name}: no `# forms:` line"));
        }
        for form in forms.split_whitespace() {
            match FORMS.iter().find(|(id, _)| *id == form) {
                None => bad.push(format!("{name}: unknown form `{form}`")),
                Some((_, marker)) if !body.contains(marker) => bad.push(format!("{name}: names `{form}` but has no `{marker}`")),
                Some(_) if !table.contains(&format!("`{form}`")) => bad.push(format!("{name}: form `{form}` is not in docs/stmt-releases.md")),
                Some(_) => {
                    seen.insert(form.to_string());
                }
            }
        }
        let old = load(path);
        if let Some(same) = header(&text, "same-as") {
            let current = load(&Path::new(ROOT).join(same));
            if old.funcs != current.funcs {
                let (o, c) = (old.to_string(), current.to_string());
                let line = o.lines().zip(c.lines()).position(|(a, b)| a != b).unwrap_or(0);
                bad.push(format!(
                    "{name}: parses to other functions than {same}; first difference at printed line {}:\n  {}\n  {}",
                    line + 1,
                    o.lines().nth(line).unwrap_or(""),
                    c.lines().nth(line).unwrap_or("")
                ));
            }
        }
    }
    for (form, _) in FORMS.iter().filter(|(f, _)| !f.ends_with("-template") && *f != "struct-handle") {
        if !seen.contains(*form) {
            bad.push(format!("older form `{form}` has no fixture"));
        }
    }
    assert!(all.len() >= 5, "only {} fixtures under {FIXTURES}", all.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `rounding_halving_sub` on int16 extremes against (a - b + 1) >> 1
/// computed exactly and wrapped to int16.
#[test]
fn rounding_halving_sub_computes_the_rounded_half_difference() {
    let m = load(&Path::new(FIXTURES).join("halide14/rounding_halving_sub.stmt"));
    let ops = misaal_frontends::halide_ops().unwrap();
    let edge = [i16::MIN, i16::MIN + 1, -2, -1, 0, 1, 2, i16::MAX - 1, i16::MAX];
    let pairs: Vec<(i16, i16)> = edge.iter().flat_map(|&a| edge.iter().map(move |&b| (a, b))).collect();
    let n = pairs.len().div_ceil(16) * 16;
    let fill = |pick: fn(&(i16, i16)) -> i16| {
        let mut b = Buffer::dense(Type::int(16), &[0], &[n as i64]);
        for (i, p) in pairs.iter().enumerate() {
            b.data[2 * i..2 * i + 2].copy_from_slice(&pick(p).to_le_bytes());
        }
        b
    };
    let (a, b) = (fill(|p| p.0), fill(|p| p.1));
    let out = Buffer::dense(Type::int(16), &[0], &[n as i64]);
    let func = &m.funcs[0];
    let args = func
        .args
        .iter()
        .map(|arg| ArgValue::Buffer(match arg.name.as_str() {
            "a" => a.clone(),
            "b" => b.clone(),
            _ => out.clone(),
        }))
        .collect();
    let result = Interp::new(&ops).run(func, args).unwrap_or_else(|e| panic!("{e}"));
    let got = &result[func.args.iter().position(|a| a.name == "out").unwrap()];
    for (i, &(x, y)) in pairs.iter().enumerate() {
        let want = ((x as i32 - y as i32 + 1) >> 1) as i16;
        let have = i16::from_le_bytes([got.data[2 * i], got.data[2 * i + 1]]);
        assert_eq!(have, want, "rounding_halving_sub({x}, {y})");
    }
}
