//! Malformed specs get diagnostics, never panics: random edits of the real
//! spec files (deleted, duplicated and swapped characters, changed digits,
//! dropped and repeated lines) must all load or fail cleanly.

use misaal_isa::SpecLibrary;
use quickcheck::{Arbitrary, Gen};

fn edit(g: &mut Gen, text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let n = chars.len().max(1);
    let at = usize::arbitrary(g) % n;
    match u8::arbitrary(g) % 7 {
        0 => {
            chars.remove(at.min(chars.len().saturating_sub(1)));
        }
        1 => {
            let c = chars[at];
            chars.insert(at, c);
        }
        2 => {
            let b = usize::arbitrary(g) % n;
            chars.swap(at, b);
        }
        3 => {
            let digits: Vec<usize> = chars.iter().enumerate().filter(|(_, c)| c.is_ascii_digit()).map(|(i, _)| i).collect();
            if !digits.is_empty() {
                let i = digits[at % digits.len()];
                chars[i] = *g.choose(&['0', '1', '7', '9']).unwrap();
                if bool::arbitrary(g) {
                    for c in "999999".chars().rev() {
                        chars.insert(i, c);
                    }
                }
            }
        }
        4 => {
            let tok = *g.choose(&["FOR", "ENDFOR", "IF", "FI", "ELSE", ":=", "[", "]", "(", ")", "?", "\n", "-", "<<", ">>s", "RETURN", "dst", "instr"]).unwrap();
            for c in tok.chars().rev() {
                chars.insert(at, c);
            }
        }
        _ => {
            let mut lines: Vec<String> = chars.iter().collect::<String>().lines().map(String::from).collect();
            if !lines.is_empty() {
                let l = at % lines.len();
                if bool::arbitrary(g) {
                    lines.remove(l);
                } else {
                    let dup = lines[l].clone();
                    lines.insert(l, dup);
                }
            }
            return lines.join("\n");
        }
    }
    chars.into_iter().collect()
}

#[test]
fn edited_specs_never_panic() {
    let dir = misaal_isa::bundled_spec_dir("x86");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "sema")).collect();
    files.sort();
    let texts: Vec<(String, String)> = files.iter().map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap())).collect();
    let rounds: usize = std::env::var("MISAAL_FUZZ_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let mut g = Gen::from_size_and_seed(100, 0x5eed);
    let (mut ok, mut rejected) = (0, 0);
    for round in 0..rounds {
        let (name, text) = &texts[round % texts.len()];
        // Keep files small so each round stays fast: one to three specs.
        let specs: Vec<&str> = text.split("\ninstr ").collect();
        let start = usize::arbitrary(&mut g) % specs.len();
        let piece = specs[start..(start + 3).min(specs.len())].join("\ninstr ");
        let mut edited = if start == 0 { piece } else { format!("instr {piece}") };
        for _ in 0..1 + u8::arbitrary(&mut g) % 3 {
            edited = edit(&mut g, &edited);
        }
        let src = vec![(name.clone(), edited.clone())];
        match std::panic::catch_unwind(|| SpecLibrary::from_sources(&src).map(|_| ())) {
            Ok(Ok(())) => ok += 1,
            Ok(Err(d)) => {
                assert!(d.0.iter().all(|e| e.span.line >= 1 && e.file == *name), "diagnostic without a location: {d}");
                rejected += 1;
            }
            Err(_) => panic!("round {round}: the loader panicked on this input:\n{edited}"),
        }
    }
    eprintln!("{rounds} edited files: {ok} loaded, {rejected} rejected with diagnostics");
    assert!(rejected > rounds / 10, "edits should usually break something");
}
