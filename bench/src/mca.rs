//! The static speed estimate of an object, for targets whose run time
//! means nothing here (ARM under qemu, x86 code for a CPU this is not):
//! the innermost loops of the object (a backward branch whose range holds
//! no other backward branch and which its range's first instruction
//! reaches, with at least [`MIN_SIMD`] SIMD
//! instructions), each fed to `llvm-mca-19` for its cycles per iteration,
//! summed over the loops, and the loops' instruction count. Loop trip
//! counts are not weighed in: ours and Halide's columns compare the same
//! Stmt's loops; they are not times.

use crate::{run_tool, which};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const MCA: &str = "llvm-mca-19";
pub const OBJDUMP: &str = "llvm-objdump-19";
/// An innermost loop counts when it holds at least this many SIMD instructions.
pub const MIN_SIMD: usize = 4;

/// The instruction set a disassembly is read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Aarch64,
    /// AT&T syntax, as llvm-objdump prints and llvm-mca reads by default.
    X86_64,
}

impl Arch {
    fn triple(self) -> &'static str {
        match self {
            Arch::Aarch64 => "aarch64",
            Arch::X86_64 => "x86_64",
        }
    }

    /// Where an operand list's trailing comment starts.
    fn comment(self) -> &'static str {
        match self {
            Arch::Aarch64 => "//",
            Arch::X86_64 => "#",
        }
    }
}

/// llvm-mca and llvm-objdump, found on PATH.
pub struct Tools {
    pub mca: PathBuf,
    pub objdump: PathBuf,
}

impl Tools {
    /// Both tools, or which one is missing and the package that has it.
    pub fn find() -> Result<Tools, String> {
        let get = |t: &str| which(t).ok_or_else(|| format!("{t} not found on PATH (scripts/setup.sh installs llvm-19)"));
        Ok(Tools { mca: get(MCA)?, objdump: get(OBJDUMP)? })
    }
}

/// One instruction of a disassembly: address, mnemonic, operands.
pub type Ins = (u64, String, String);

pub fn disasm(objdump: &Path, obj: &Path) -> Result<Vec<Ins>, String> {
    let out = run_tool(Command::new(objdump).args(["-d", "--no-show-raw-insn"]).arg(obj), OBJDUMP)?;
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out).lines() {
        // `     1c: 	add	x0, x1, x2`
        let Some((addr, rest)) = line.trim_start().split_once(':') else { continue };
        let Ok(a) = u64::from_str_radix(addr.trim(), 16) else { continue };
        let rest = rest.trim();
        if rest.is_empty() || rest.starts_with('<') {
            continue;
        }
        let (mn, ops) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        v.push((a, mn.to_string(), ops.trim().to_string()));
    }
    Ok(v)
}

/// The target of a direct branch, if `mn` is one (`b`, `b.ne`, `cbz`,
/// `tbnz`; `jne`, `jmp`, `loop`).
pub fn branch_target(arch: Arch, mn: &str, ops: &str) -> Option<u64> {
    let is_branch = match arch {
        Arch::Aarch64 => mn == "b" || mn.starts_with("b.") || matches!(mn, "cbz" | "cbnz" | "tbz" | "tbnz"),
        Arch::X86_64 => mn.starts_with('j') || mn.starts_with("loop"),
    };
    if !is_branch {
        return None;
    }
    // The target is the last operand: `0x1c <f+0x1c>` or `1c <f+0x1c>`.
    let last = ops.split(',').next_back()?.split_whitespace().next()?;
    u64::from_str_radix(last.trim_start_matches("0x").trim_start_matches('#'), 16).ok()
}

pub fn is_simd(arch: Arch, ops: &str) -> bool {
    match arch {
        Arch::Aarch64 => ops.split(|c: char| !c.is_ascii_alphanumeric() && c != '.').any(|w| {
            let w = w.split('.').next().unwrap_or("");
            (w.starts_with('v') || w.starts_with('q')) && w.len() > 1 && w[1..].bytes().all(|b| b.is_ascii_digit())
        }),
        Arch::X86_64 => ["%xmm", "%ymm", "%zmm"].iter().any(|r| ops.contains(r)),
    }
}

/// The innermost loops with at least [`MIN_SIMD`] SIMD instructions:
/// each a slice of `ins` from the branch target to the backward branch.
pub fn inner_loops(arch: Arch, ins: &[Ins]) -> Vec<&[Ins]> {
    // Each section of an object starts at address 0: the target is looked
    // for backwards from the branch, within its run of rising addresses.
    let start_of = |i: usize, t: u64| -> Option<usize> {
        let mut j = i;
        loop {
            if ins[j].0 == t {
                return Some(j);
            }
            if j == 0 || ins[j - 1].0 >= ins[j].0 || ins[j].0 < t {
                return None;
            }
            j -= 1;
        }
    };
    let spans: Vec<(usize, usize)> = ins
        .iter()
        .enumerate()
        .filter_map(|(i, (a, mn, ops))| branch_target(arch, mn, ops).filter(|t| t <= a).and_then(|t| start_of(i, t)).map(|s| (s, i)))
        .collect();
    let spans: Vec<(usize, usize)> = spans.into_iter().filter(|&(s, e)| closes(arch, &ins[s..=e])).collect();
    spans
        .iter()
        .filter(|s| !spans.iter().any(|o| o != *s && o.0 >= s.0 && o.1 <= s.1))
        .map(|&(s, e)| &ins[s..=e])
        .filter(|body| body.iter().filter(|(_, _, ops)| is_simd(arch, ops)).count() >= MIN_SIMD)
        .collect()
}

/// Whether a backward branch's range is a loop: its last instruction (the
/// backward branch) is reached from its first along paths that stay in the
/// range. Compilers lay cold blocks out after hot ones, so a backward jump
/// often closes straight-line code that leaves the range by a `ret` or an
/// unconditional jump (Halide's and our bounds-query blocks): that range
/// runs once per call, not once per iteration.
fn closes(arch: Arch, body: &[Ins]) -> bool {
    let Some(last) = body.len().checked_sub(1) else { return false };
    let index_of = |addr: u64| body.iter().position(|(a, _, _)| *a == addr);
    let (mut seen, mut todo) = (vec![false; body.len()], vec![0]);
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        if i == last {
            return true;
        }
        let (_, mn, ops) = &body[i];
        let falls_through = match arch {
            Arch::X86_64 => !(mn.starts_with("jmp") || mn.starts_with("ret") || mn == "ud2"),
            Arch::Aarch64 => !matches!(mn.as_str(), "b" | "br" | "ret"),
        };
        if let Some(j) = branch_target(arch, mn, ops).and_then(index_of) {
            todo.push(j);
        }
        if falls_through {
            todo.push(i + 1);
        }
    }
    false
}

/// llvm-mca's cycles per iteration of a loop body (its branches and
/// padding left out) on `cpu`.
pub fn mca_cycles(mca: &Path, arch: Arch, cpu: &str, body: &[Ins]) -> Result<f64, String> {
    let text: String = body
        .iter()
        .filter(|(_, mn, ops)| branch_target(arch, mn, ops).is_none() && !mn.starts_with("nop") && mn != "int3" && mn != "data16")
        .map(|(_, mn, ops)| format!("{mn} {}\n", ops.split(arch.comment()).next().unwrap_or("").split('<').next().unwrap_or("").trim()))
        .collect();
    const ITER: u32 = 100;
    let mut child = Command::new(mca)
        .args([&format!("-mtriple={}", arch.triple()), &format!("-mcpu={cpu}"), &format!("-iterations={ITER}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{MCA}: {e}"))?;
    {
        use std::io::Write;
        child.stdin.take().expect("piped").write_all(text.as_bytes()).map_err(|e| format!("{MCA}: {e}"))?;
    }
    let out = child.wait_with_output().map_err(|e| format!("{MCA}: {e}"))?;
    let s = String::from_utf8_lossy(&out.stdout);
    let total = s.lines().find_map(|l| l.trim().strip_prefix("Total Cycles:")).and_then(|v| v.trim().parse::<f64>().ok());
    total.map(|t| t / ITER as f64).ok_or_else(|| {
        let err = String::from_utf8_lossy(&out.stderr);
        // `<stdin>:LINE:COL: error: ...`: name the line it could not read.
        let line = err.split(':').nth(1).and_then(|l| l.parse::<usize>().ok()).and_then(|l| text.lines().nth(l.saturating_sub(1))).unwrap_or("");
        format!("{MCA} gave no cycle count: {} (`{line}`)", err.lines().next().unwrap_or(""))
    })
}

/// The static estimate of one object: mca cycles summed over its inner
/// loops, their instructions, how many loops.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Estimate {
    /// NaN where the object has no inner loop.
    pub cycles: f64,
    /// Each inner loop's cycles per byte it writes ([`bytes_per_iteration`]),
    /// summed over the loops; NaN if a loop's bytes could not be read (ARM,
    /// or an x86 loop that neither stores nor loads a vector). Per
    /// iteration, a loop unrolled four times costs four times as much for
    /// four times the work; per byte it does not. Trip counts are still not
    /// weighed, and a loop Halide specializes twice counts twice.
    pub cycles_per_byte: f64,
    pub instrs: usize,
    pub loops: usize,
}

/// x86 (AT&T) operands, split at the commas outside parentheses, with a
/// trailing `{%k1}` or `{z}` left out.
fn operands(ops: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in ops.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(ops[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(ops[start..].trim());
    out.into_iter().map(|o| o.split('{').next().unwrap_or("").trim()).filter(|o| !o.is_empty()).collect()
}

fn vector_bytes(operand: &str) -> Option<usize> {
    [("%zmm", 64), ("%ymm", 32), ("%xmm", 16)].iter().find(|(r, _)| operand.starts_with(r)).map(|&(_, b)| b)
}

/// How many times narrower a `vpmov*` narrowing (`wb`, `qd`, ...) or
/// widening (`zxbw`, `sxdq`, ...) makes its memory side than its register.
fn width_ratio(mn: &str) -> usize {
    let size = |c: u8| match c {
        b'b' => 1,
        b'w' => 2,
        b'd' => 4,
        _ => 8,
    };
    let tail = mn.trim_start_matches("vpmov").trim_start_matches("zx").trim_start_matches("sx").trim_start_matches("us").trim_start_matches('s').as_bytes();
    match tail {
        [a, b, ..] => size(*a).max(size(*b)) / size(*a).min(size(*b)),
        _ => 1,
    }
}

/// The bytes one iteration of an x86 loop writes to memory (vector and
/// scalar stores; a narrowing `vpmov*` store what it writes), or, in a loop
/// that writes nothing (a reduction), the bytes its vector loads read.
/// `None` when neither is found. AArch64: [`aarch64_bytes_per_iteration`].
pub fn bytes_per_iteration(arch: Arch, body: &[Ins]) -> Option<usize> {
    if arch == Arch::Aarch64 {
        return aarch64_bytes_per_iteration(body);
    }
    let (mut stored, mut loaded) = (0, 0);
    for (_, mn, ops) in body {
        let ops = operands(ops);
        let (Some(first), Some(last)) = (ops.first(), ops.last()) else { continue };
        let narrowing = mn.starts_with("vpmov") && !mn.contains("zx") && !mn.contains("sx") && !mn.starts_with("vpmovm");
        if last.contains('(') && ops.len() >= 2 {
            let src = ops[ops.len() - 2];
            stored += match vector_bytes(src) {
                Some(b) if narrowing => b / width_ratio(mn),
                Some(_) if mn.starts_with("vextract") && (mn.ends_with("128") || mn.ends_with("x4")) => 16,
                Some(_) if mn.starts_with("vextract") => 32,
                Some(_) if mn.starts_with("vpextr") => [1, 2, 4, 8][["b", "w", "d", "q"].iter().position(|s| mn.ends_with(s)).unwrap_or(3)],
                Some(_) if mn == "vmovd" => 4,
                Some(_) if mn == "vmovq" => 8,
                Some(b) => b,
                None if mn.starts_with("mov") => [1, 2, 4, 8][["b", "w", "l", "q"].iter().position(|s| mn.ends_with(s)).unwrap_or(2)],
                None => 0,
            };
        } else if first.contains('(') && ops.len() >= 2
            && let Some(b) = vector_bytes(last)
        {
            loaded += if mn.starts_with("vpbroadcast") { [1, 2, 4, 8][["b", "w", "d", "q"].iter().position(|s| mn.ends_with(s)).unwrap_or(2)] } else { b / width_ratio(mn) };
        }
    }
    [stored, loaded].into_iter().find(|&b| b > 0)
}

/// The bytes an AArch64 memory access moves, and whether it stores them:
/// `str q0` 16, `stp d0, d1` 16, `st1 { v0.16b, v1.16b }` 32, a lane
/// `st1 { v0.h }[3]` 2, `ld1r { v0.8h }` 2, `strb w0` 1. `None` when `mn` is
/// neither a load nor a store, or loads general registers, which
/// [`aarch64_bytes_per_iteration`] leaves out.
fn aarch64_access(mn: &str, ops: &str) -> Option<(usize, bool)> {
    let store = mn.starts_with("st");
    if !store && !mn.starts_with("ld") {
        return None;
    }
    let elem = |c: char| match c {
        'b' => 1,
        'h' => 2,
        's' => 4,
        'd' => 8,
        _ => 16,
    };
    if let Some(list) = ops.strip_prefix('{') {
        // `{ v0.16b, v1.16b }, [x0]` or `{ v0.b, v1.b }[3], [x0]`
        let (regs, rest) = list.split_once('}')?;
        let regs: Vec<&str> = regs.split(',').map(str::trim).filter(|r| !r.is_empty()).collect();
        let arr = regs.first()?.split_once('.')?.1;
        let lane = rest.starts_with('[') || mn.ends_with('r');
        let digits: String = arr.chars().take_while(char::is_ascii_digit).collect();
        let each = match (lane, digits.parse::<usize>()) {
            (false, Ok(n)) => n * elem(arr.chars().last()?),
            _ => elem(arr.chars().last()?),
        };
        return Some((each * regs.len(), store));
    }
    let first = ops.split(',').next()?.trim();
    let (kind, num) = first.split_at_checked(1)?;
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !store && !matches!(kind, "q" | "d" | "s" | "h" | "b") {
        return None;
    }
    let size = match kind {
        "q" => 16,
        "d" | "x" => 8,
        "s" => 4,
        "h" => 2,
        "b" => 1,
        "w" if mn.ends_with('b') => 1,
        "w" if mn.ends_with('h') => 2,
        "w" => 4,
        _ => return None,
    };
    let pair = mn.starts_with("stp") || mn.starts_with("ldp") || mn.starts_with("stnp") || mn.starts_with("ldnp");
    Some((if pair { 2 * size } else { size }, store))
}

/// [`bytes_per_iteration`] for AArch64: what the stores write, or in a
/// loop that stores nothing, what its SIMD loads read.
fn aarch64_bytes_per_iteration(body: &[Ins]) -> Option<usize> {
    let (mut stored, mut loaded) = (0, 0);
    for (_, mn, ops) in body {
        match aarch64_access(mn, ops) {
            Some((b, true)) => stored += b,
            Some((b, false)) => loaded += b,
            None => {}
        }
    }
    [stored, loaded].into_iter().find(|&b| b > 0)
}

/// `obj`'s estimate on `cpu`.
pub fn estimate(tools: &Tools, arch: Arch, cpu: &str, obj: &Path) -> Result<Estimate, String> {
    let ins = disasm(&tools.objdump, obj)?;
    let mut e = Estimate::default();
    for body in inner_loops(arch, &ins) {
        let cycles = mca_cycles(&tools.mca, arch, cpu, body)?;
        e.cycles += cycles;
        e.cycles_per_byte += bytes_per_iteration(arch, body).map_or(f64::NAN, |b| cycles / b as f64);
        e.instrs += body.len();
        e.loops += 1;
    }
    if e.loops == 0 {
        // No inner loop (straight-line code, or a loop fully unrolled):
        // nothing estimated, not zero cycles.
        e.cycles = f64::NAN;
        e.cycles_per_byte = f64::NAN;
    }
    Ok(e)
}

/// Halide's cycles per byte over ours (see [`Estimate::cycles_per_byte`]).
pub fn per_byte_ratio(ours: Option<Estimate>, halide: Option<Estimate>) -> Option<f64> {
    match (ours, halide) {
        (Some(o), Some(h)) if o.cycles_per_byte > 0.0 && h.cycles_per_byte > 0.0 => Some(h.cycles_per_byte / o.cycles_per_byte),
        _ => None,
    }
}

/// Halide's cycles over ours: above 1 means ours is estimated faster.
pub fn ratio(ours: Option<Estimate>, halide: Option<Estimate>) -> Option<f64> {
    match (ours, halide) {
        (Some(o), Some(h)) if o.cycles > 0.0 && h.cycles > 0.0 => Some(h.cycles / o.cycles),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ins(v: &[(u64, &str, &str)]) -> Vec<Ins> {
        v.iter().map(|(a, m, o)| (*a, m.to_string(), o.to_string())).collect()
    }

    #[test]
    fn finds_innermost_vector_loops() {
        let code = ins(&[
            (0x0, "mov", "x0, #0"),
            (0x4, "ldr", "q0, [x1]"),
            (0x8, "add", "v0.16b, v0.16b, v1.16b"),
            (0xc, "umax", "v2.16b, v0.16b, v1.16b"),
            (0x10, "str", "q2, [x2]"),
            (0x14, "subs", "x3, x3, #1"),
            (0x18, "b.ne", "0x4 <f+0x4>"),
            (0x1c, "cbnz", "x4, 0x0 <f>"),
        ]);
        let loops = inner_loops(Arch::Aarch64, &code);
        assert_eq!(loops.len(), 1, "the outer loop holds the inner one");
        assert_eq!(loops[0].len(), 6);
        assert!(is_simd(Arch::Aarch64, "v0.16b, v1.16b") && is_simd(Arch::Aarch64, "q2, [x2]") && !is_simd(Arch::Aarch64, "x3, x3, #1"));
    }

    #[test]
    fn finds_innermost_x86_loops() {
        let code = ins(&[
            (0x0, "xorl", "%eax, %eax"),
            (0x2, "vmovdqu64", "(%rdi,%rax), %zmm0"),
            (0x9, "vpaddb", "%zmm1, %zmm0, %zmm0"),
            (0xf, "vpmaxub", "%zmm1, %zmm0, %zmm2"),
            (0x15, "vmovdqu64", "%zmm2, (%rsi,%rax)"),
            (0x1c, "addq", "$0x40, %rax"),
            (0x20, "jne", "0x2 <f+0x2>"),
            (0x22, "jmp", "0x0 <f>"),
            (0x24, "jmpq", "*%rax"),
        ]);
        let loops = inner_loops(Arch::X86_64, &code);
        assert_eq!(loops.len(), 1, "{loops:?}");
        assert_eq!(loops[0].len(), 6);
        assert_eq!(branch_target(Arch::X86_64, "jmpq", "*%rax"), None);
        assert!(!is_simd(Arch::X86_64, "$0x40, %rax"));
    }

    #[test]
    fn a_backward_jump_over_code_that_leaves_is_no_loop() {
        // Cold blocks laid out after the hot path: the range 0x0-0x20 ends
        // in a backward branch, but every path from 0x0 leaves it first.
        let code = ins(&[
            (0x0, "cmpq", "$0x0, (%rsi)"),
            (0x4, "jne", "0x40 <f+0x40>"),
            (0x6, "vpxor", "%xmm0, %xmm0, %xmm0"),
            (0xa, "vmovdqu", "%xmm0, (%rsi)"),
            (0xe, "vmovdqu", "%ymm2, (%rax)"),
            (0x12, "jmp", "0x40 <f+0x40>"),
            (0x14, "vmovdqu", "%xmm1, 0x20(%rax)"),
            (0x18, "vmovdqu", "%ymm2, (%rax)"),
            (0x1c, "testq", "%r10, %r10"),
            (0x20, "je", "0x0 <f>"),
            (0x22, "vmovdqu", "%xmm1, (%rdx)"),
            (0x26, "retq", ""),
            (0x28, "vmovdqu", "%xmm1, (%rdx)"),
            (0x2c, "vmovdqu", "%xmm1, (%rdx)"),
            (0x30, "vmovdqu", "%xmm1, (%rdx)"),
            (0x34, "vmovdqu", "%xmm1, (%rdx)"),
            (0x38, "jmp", "0x22 <f+0x22>"),
            (0x40, "vpaddd", "%zmm0, %zmm1, %zmm1"),
            (0x46, "vpaddd", "%zmm0, %zmm1, %zmm1"),
            (0x4c, "vpaddd", "%zmm0, %zmm1, %zmm1"),
            (0x52, "vpaddd", "%zmm0, %zmm1, %zmm1"),
            (0x58, "decq", "%rcx"),
            (0x5b, "jne", "0x40 <f+0x40>"),
        ]);
        let loops = inner_loops(Arch::X86_64, &code);
        assert_eq!(loops.len(), 1, "{loops:?}");
        assert_eq!(loops[0][0].0, 0x40);
        // A loop with a forward branch inside it still closes.
        let arm = ins(&[
            (0x0, "ldr", "q0, [x1]"),
            (0x4, "cbz", "x5, 0xc <f+0xc>"),
            (0x8, "add", "v0.16b, v0.16b, v1.16b"),
            (0xc, "umax", "v2.16b, v0.16b, v1.16b"),
            (0x10, "str", "q2, [x2]"),
            (0x14, "b.ne", "0x0 <f>"),
        ]);
        assert_eq!(inner_loops(Arch::Aarch64, &arm).len(), 1);
    }

    #[test]
    fn counts_the_bytes_a_loop_writes() {
        let body = ins(&[
            (0x0, "vmovdqu64", "(%rdi,%rax), %zmm0"),
            (0x7, "vmovdqu64", "%zmm2, (%rsi,%rax)"),
            (0xe, "vmovdqu8", "%zmm2, 0x40(%rsi,%rax) {%k1}"),
            (0x15, "vpmovwb", "%zmm3, (%rdx)"),
            (0x1b, "vpmovusdb", "%zmm3, 0x20(%rdx)"),
            (0x21, "vextracti128", "$0x1, %ymm4, (%rcx)"),
            (0x27, "movb", "%al, (%r8)"),
            (0x2a, "vpaddb", "(%r9), %zmm1, %zmm1"),
        ]);
        assert_eq!(bytes_per_iteration(Arch::X86_64, &body), Some(64 + 64 + 32 + 16 + 16 + 1));
        // A reduction writes nothing: what it reads.
        let reduce = ins(&[(0x0, "vpmovzxbw", "(%rdi,%rax), %zmm0"), (0x6, "vpdpwssd", "%zmm0, %zmm0, %zmm1"), (0xc, "vpbroadcastd", "(%rsi), %zmm2")]);
        assert_eq!(bytes_per_iteration(Arch::X86_64, &reduce), Some(32 + 4));
        assert_eq!(bytes_per_iteration(Arch::X86_64, &ins(&[(0x0, "vpaddd", "%zmm0, %zmm1, %zmm1")])), None);
    }

    #[test]
    fn counts_the_bytes_an_aarch64_loop_writes() {
        // Halide's dilate3x3 inner loop, shortened: two `stp q` write 64 bytes.
        let body = ins(&[
            (0x0, "ldp", "q0, q3, [x3, #-0x20]"),
            (0x4, "ldur", "q1, [x3, #-0x1f]"),
            (0x8, "umax", "v0.16b, v0.16b, v1.16b"),
            (0xc, "stp", "q0, q3, [x2, #-0x20]"),
            (0x10, "stp", "q1, q2, [x2], #0x40"),
            (0x14, "b.ne", "0x0 <f>"),
        ]);
        assert_eq!(bytes_per_iteration(Arch::Aarch64, &body), Some(64));
        let lists = ins(&[
            (0x0, "st1", "{ v0.16b, v1.16b }, [x0], #32"),
            (0x4, "st1", "{ v2.h }[3], [x1]"),
            (0x8, "str", "d4, [x2]"),
            (0xc, "strb", "w5, [x3]"),
            (0x10, "st2", "{ v6.8b, v7.8b }, [x4]"),
        ]);
        assert_eq!(bytes_per_iteration(Arch::Aarch64, &lists), Some(32 + 2 + 8 + 1 + 16));
        // A reduction stores nothing: its SIMD loads, not the scalar ones.
        let reduce = ins(&[
            (0x0, "ldr", "q0, [x0], #16"),
            (0x4, "ld1r", "{ v1.8h }, [x1]"),
            (0x8, "ldr", "x9, [x2]"),
            (0xc, "sdot", "v2.4s, v0.16b, v1.16b"),
        ]);
        assert_eq!(bytes_per_iteration(Arch::Aarch64, &reduce), Some(16 + 2));
        // Operands it cannot read are no access, not a panic.
        assert_eq!(aarch64_access("ldr", ""), None);
        assert_eq!(aarch64_access("str", "é0, [x0]"), None);
    }
}
