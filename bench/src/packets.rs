//! HVX's static estimate: the packets (instruction bundles) of the
//! innermost loops in `llvm-objdump-19 -d` of a linked Hexagon program,
//! for one set of functions (ours, or Halide's pipeline).

use std::path::Path;
use std::process::Command;

/// The static speed estimate of one function set in a linked program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Packets {
    /// Innermost loops found (hardware `loopN`/`endloopN` pairs and
    /// backward jumps that contain no other loop).
    pub loops: usize,
    /// Packets summed over those loops.
    pub packets: usize,
}

/// Counts packets in the innermost loops of the functions whose symbol
/// `keep` accepts, from `llvm-objdump -d` text of a linked program. A
/// packet is one `{ ... }` bundle; a loop runs from a `loopN(start, ...)`
/// target to the bundle marked `:endloopN`, or from a backward jump's
/// target to the jump.
pub fn count_packets(disasm: &str, keep: &dyn Fn(&str) -> bool) -> Packets {
    let mut total = Packets::default();
    let mut func: Option<Vec<(u64, String)>> = None;
    let mut flush = |f: Option<Vec<(u64, String)>>| {
        if let Some(b) = f {
            let p = loops_of(&b);
            total.loops += p.loops;
            total.packets += p.packets;
        }
    };
    let mut cur: Option<(u64, String)> = None;
    for line in disasm.lines() {
        // `00001234 <name>:` opens a function.
        if let Some(name) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")).map(|(_, n)| n) {
            flush(func.take());
            cur = None;
            func = keep(name).then(Vec::new);
            continue;
        }
        let Some(bundles) = func.as_mut() else {
            continue;
        };
        let Some((addr, text)) = line.split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let text = text.trim();
        if let Some(rest) = text.strip_prefix('{') {
            cur = Some((addr, rest.to_string()));
        } else if let Some((_, t)) = cur.as_mut() {
            t.push('\n');
            t.push_str(text);
        } else {
            continue;
        }
        if text.contains('}')
            && let Some(b) = cur.take()
        {
            bundles.push(b);
        }
    }
    flush(func.take());
    total
}

/// Whether a bundle in `[start, end)` leaves that range unconditionally
/// (a `jump` elsewhere, a return): then a backward jump from `end` to
/// `start` is block layout (code placed out of order), not a loop.
fn leaves(bundles: &[(u64, String)], start: u64, end: u64) -> bool {
    bundles.iter().filter(|(a, _)| *a >= start && *a < end).any(|(_, text)| {
        text.split(['\n', ';']).map(|i| i.trim().trim_start_matches('{').trim()).any(|i| {
            if i.starts_with("jumpr") || i.starts_with("dealloc_return") || i.starts_with("return") {
                return true;
            }
            let Some(rest) = i.strip_prefix("jump ") else {
                return false;
            };
            u64::from_str_radix(rest.trim().trim_end_matches('}').trim().trim_start_matches("0x"), 16).is_ok_and(|t| t < start || t > end)
        })
    })
}

/// The innermost loops of one function's bundles.
fn loops_of(bundles: &[(u64, String)]) -> Packets {
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
    let mut setups: Vec<(u8, u64)> = Vec::new();
    let mut loops: Vec<(u64, u64)> = Vec::new();
    for (addr, text) in bundles {
        for n in [0u8, 1] {
            let tag = format!("loop{n}(");
            for (k, _) in text.match_indices(&tag) {
                if let Some(t) = text[k + tag.len()..].split(',').next().and_then(hex) {
                    setups.push((n, t));
                }
            }
            // `:endloop01` closes both levels in one packet.
            if text.contains(&format!(":endloop{n}")) || text.contains(":endloop01") {
                // The body starts at the latest setup target of this level before the end.
                if let Some(&(_, t)) = setups.iter().filter(|(m, t)| *m == n && *t <= *addr).max_by_key(|(_, t)| *t) {
                    loops.push((t, *addr));
                }
            }
        }
        for (k, _) in text.match_indices("jump") {
            let rest = &text[k + 4..];
            let rest = rest.trim_start_matches(":t").trim_start_matches(":nt").trim_start();
            if let Some(t) = rest.split(|c: char| c.is_whitespace() || c == '}').next().filter(|t| t.starts_with("0x")).and_then(hex)
                && t <= *addr
                && bundles.first().is_some_and(|(f, _)| t >= *f)
                && !leaves(bundles, t, *addr)
            {
                loops.push((t, *addr));
            }
        }
    }
    loops.sort();
    loops.dedup();
    let inner: Vec<&(u64, u64)> = loops.iter().filter(|(s, e)| !loops.iter().any(|(s2, e2)| (s2, e2) != (s, e) && s <= s2 && e2 <= e)).collect();
    if std::env::var_os("MISAAL_HVX_LOOPS").is_some() {
        for (s, e) in &inner {
            eprintln!("innermost loop {s:#x}..={e:#x}: {} packets", bundles.iter().filter(|(a, _)| a >= s && a <= e).count());
        }
    }
    let packets = inner.iter().map(|(s, e)| bundles.iter().filter(|(a, _)| a >= s && a <= e).count()).sum();
    Packets { loops: inner.len(), packets }
}

/// The pipeline's own functions in Halide's object: the function and its
/// closures (`<function>` and names starting with `<function>_`), not the
/// runtime pieces the object carries.
pub fn halide_functions(obj: &Path, objdump: &Path, function: &str) -> Result<Vec<String>, String> {
    let out = Command::new(objdump).arg("-t").arg(obj).output().map_err(|e| format!("{}: {e}", objdump.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter(|l| l.contains(" F "))
        .filter_map(|l| l.split_whitespace().last())
        .filter(|s| *s == function || (s.starts_with(&format!("{function}_")) && !s.ends_with("_argv") && !s.ends_with("_metadata")))
        .map(str::to_string)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::count_packets;

    #[test]
    fn counts_bundles_of_the_innermost_loops() {
        let d = "\
00001000 <f>:
    1000: { \tr0 = #0 }
    1004: { \tloop1(0x1008,r5) }
    1008: { \tloop0(0x1010,#0xd)
    100c:   \tr1 = #1 }
    1010: { \tv0 = vmem(r2++#1)
    1014:   \tv1 = vadd(v0,v0) }
    1018: { \tvmem(r3++#1) = v1 }  :endloop0
    101c: { \tr4 = add(r4,#1) }  :endloop1
    1020: { \tp0 = cmp.gt(r4,#3)
    1024:   \tif (p0.new) jump:t 0x1020 }
    1028: { \tjumpr r31 }
    102c: { \tr5 = #0 }
    1030: { \tjump 0x1000 }
    1034: { \tp0 = cmp.eq(r5,#0); if (p0.new) jump:nt 0x102c }

00002000 <g>:
    2000: { \tjump 0x2000 }
";
        let p = count_packets(d, &|s| s == "f");
        // loop0 body 0x1010..0x1018 (2 packets) and the jump loop at 0x1020
        // (1); the jump back from 0x1034 passes an unconditional jump out.
        assert_eq!((p.loops, p.packets), (2, 3));
        assert_eq!(count_packets(d, &|s| s == "g").packets, 1);
        assert_eq!(count_packets(d, &|_| false).loops, 0);
    }
}
