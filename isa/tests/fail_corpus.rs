//! File-driven spec corpora; every file is its own test.
//!
//! `tests/fail/*.sema` opens with `// expect: LINE:COL: MESSAGE`: loading the
//! file must fail with a diagnostic at that place whose message starts with
//! MESSAGE. `tests/pass/*.sema` must load, and each `// eval NAME OPERANDS
//! => RESULT` line in it must hold.

use libtest_mimic::{Arguments, Failed, Trial};
use misaal_isa::{BitVec, SpecLibrary};
use std::path::{Path, PathBuf};

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sema"))
        .collect();
    v.sort();
    v
}

fn load(path: &Path) -> Result<SpecLibrary, misaal_isa::Diagnostics> {
    let text = std::fs::read_to_string(path).unwrap();
    SpecLibrary::from_sources(&[(path.display().to_string(), text)])
}

fn fail_case(path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).unwrap();
    let expect = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// expect: "))
        .ok_or("first line must be `// expect: LINE:COL: MESSAGE`")?;
    let (pos, msg) = expect.split_at(expect.find(": ").ok_or("expect line needs `LINE:COL: MESSAGE`")?);
    let want = format!("{}:{pos}: error: {}", path.display(), &msg[2..]);
    match load(path) {
        Ok(_) => Err(format!("loaded without error; expected `{want}`").into()),
        Err(d) => {
            if d.0.iter().any(|e| e.to_string().starts_with(&want)) {
                Ok(())
            } else {
                Err(format!("expected `{want}`\n     got `{d}`").into())
            }
        }
    }
}

fn pass_case(path: &Path) -> Result<(), Failed> {
    let lib = load(path).map_err(|d| format!("{d}"))?;
    let text = std::fs::read_to_string(path).unwrap();
    let mut checked = 0;
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("// eval ") else { continue };
        let (call, want) = rest.split_once("=>").ok_or(format!("line {}: eval needs `=> RESULT`", n + 1))?;
        let mut words = call.split_whitespace();
        let name = words.next().ok_or("eval needs a name")?;
        // `add<1,8,4>` instantiates a generic instruction.
        let (instr, sem) = match name.split_once('<') {
            Some((base, args)) => {
                let args: Vec<i128> = args.trim_end_matches('>').split(',').map(|a| a.trim().parse()).collect::<Result<_, _>>().map_err(|e| format!("line {}: {e}", n + 1))?;
                lib.instantiate(base, &args).map_err(|e| format!("line {}: {e}", n + 1))?
            }
            None => lib.get(name).map(|(i, s)| (i.clone(), s.clone())).ok_or(format!("line {}: no spec `{name}`", n + 1))?,
        };
        let ops: Vec<BitVec> = instr.params.iter().zip(words).map(|(p, w)| BitVec::parse_hex(p.ty.width(), w)).collect::<Result<_, _>>()?;
        let got = sem.eval(&ops).map_err(|e| e.to_string())?;
        let want = BitVec::parse_hex(got.width(), want.trim())?;
        if got != want {
            return Err(format!("line {}: {name} gave {got}, expected {want}", n + 1).into());
        }
        checked += 1;
    }
    if checked == 0 {
        return Err("a pass file needs at least one `// eval` line".into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for p in files("fail") {
        let name = format!("fail::{}", p.file_stem().unwrap().to_string_lossy());
        trials.push(Trial::test(name, move || fail_case(&p)));
    }
    for p in files("pass") {
        let name = format!("pass::{}", p.file_stem().unwrap().to_string_lossy());
        trials.push(Trial::test(name, move || pass_case(&p)));
    }
    libtest_mimic::run(&args, trials).exit();
}
