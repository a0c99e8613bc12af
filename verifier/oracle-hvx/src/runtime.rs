//! The freestanding runtime every qemu-hexagon program of ours links: the
//! spec oracle's harness and `misaal bench --target hvx`'s kernel harness.
//! There is no Hexagon libc here, so the pieces C code expects are ours:
//! Linux system calls through `trap0(#1)` (qemu's user mode serves them),
//! `memcpy`/`memset`, whole-buffer reads and writes on the standard
//! streams, and the build flags and link step.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Flags for every translation unit: 128-byte HVX on v67 (what qemu 7.2
/// runs), no host headers or libraries.
pub const CFLAGS: &[&str] = &["--target=hexagon-unknown-none-elf", "-mv67", "-mhvx", "-mhvx-length=128B", "-O2", "-ffreestanding", "-fno-builtin", "-nostdlib", "-w"];

/// Declarations of the runtime below, for a unit that calls it.
pub const RUNTIME_H: &str = r#"#define SYS_READ 63
#define SYS_WRITE 64
#define SYS_EXIT 94
long sys(long nr, long a, long b, long c);
/* Reads exactly n bytes from stdin; 0 at a clean end of input. */
int read_exact(void *d, unsigned long n);
/* Writes n bytes to stdout, or exits with status 6. */
void write_all(const void *s, unsigned long n);
"#;

/// The runtime's definitions (one unit of the program holds them).
pub const RUNTIME_C: &str = r#"
void *memcpy(void *d, const void *s, __SIZE_TYPE__ n) {
  unsigned char *a = d; const unsigned char *b = s;
  while (n--) *a++ = *b++;
  return d;
}
void *memset(void *d, int c, __SIZE_TYPE__ n) {
  unsigned char *a = d;
  while (n--) *a++ = (unsigned char)c;
  return d;
}
/* Linux system calls: qemu's user mode serves trap0(#1), number in r6. */
long sys(long nr, long a, long b, long c) {
  register long r0 __asm__("r0") = a;
  register long r1 __asm__("r1") = b;
  register long r2 __asm__("r2") = c;
  register long r6 __asm__("r6") = nr;
  __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}
/* Hexagon has no divide instruction: compilers call these (compiler-rt's
   names), by shift and subtract; C semantics, quotients truncated. */
unsigned long long __hexagon_udivdi3(unsigned long long n, unsigned long long d) {
  unsigned long long q = 0, r = 0;
  for (int i = 63; i >= 0; i--) {
    r = (r << 1) | ((n >> i) & 1);
    if (r >= d) { r -= d; q |= 1ULL << i; }
  }
  return q;
}
unsigned long long __hexagon_umoddi3(unsigned long long n, unsigned long long d) { return n - __hexagon_udivdi3(n, d) * d; }
long long __hexagon_divdi3(long long a, long long b) {
  unsigned long long ua = a < 0 ? -(unsigned long long)a : (unsigned long long)a, ub = b < 0 ? -(unsigned long long)b : (unsigned long long)b;
  unsigned long long q = __hexagon_udivdi3(ua, ub);
  return (long long)((a < 0) != (b < 0) ? -q : q);
}
long long __hexagon_moddi3(long long a, long long b) { return (long long)((unsigned long long)a - (unsigned long long)__hexagon_divdi3(a, b) * (unsigned long long)b); }
unsigned __hexagon_udivsi3(unsigned n, unsigned d) { return (unsigned)__hexagon_udivdi3(n, d); }
unsigned __hexagon_umodsi3(unsigned n, unsigned d) { return n - __hexagon_udivsi3(n, d) * d; }
int __hexagon_divsi3(int a, int b) { return (int)__hexagon_divdi3(a, b); }
int __hexagon_modsi3(int a, int b) { return (int)((unsigned)a - (unsigned)__hexagon_divsi3(a, b) * (unsigned)b); }
int read_exact(void *d, unsigned long n) {
  unsigned char *p = d;
  while (n) {
    long got = sys(SYS_READ, 0, (long)p, (long)n);
    if (got <= 0) return 0;
    p += got; n -= (unsigned long)got;
  }
  return 1;
}
void write_all(const void *s, unsigned long n) {
  const unsigned char *p = s;
  while (n) {
    long w = sys(SYS_WRITE, 1, (long)p, (long)n);
    if (w <= 0) sys(SYS_EXIT, 6, 0, 0);
    p += w; n -= (unsigned long)w;
  }
}
"#;

/// Compiles `units` (name, source; with `extra_flags` after [`CFLAGS`]) in
/// parallel into `dir`, links them with `objects` (entry `_start`, unused
/// sections dropped) and renames the result to `exe` only when complete.
pub fn build(cc: &Path, ld: &Path, dir: &Path, units: &[(String, String)], extra_flags: &[String], objects: &[PathBuf], exe: &Path) -> Result<(), String> {
    let compile = |c: &Path, o: &Path| {
        let mut cmd = Command::new(cc);
        cmd.args(CFLAGS).args(extra_flags).arg("-c").arg(c).arg("-o").arg(o);
        cmd
    };
    let link = |objs: &[PathBuf], out: &Path| {
        let mut cmd = Command::new(ld);
        cmd.args(["--entry=_start", "-static", "--gc-sections"]).args(objs).args(objects).arg("-o").arg(out);
        cmd
    };
    misaal_oracle_qemu::compile_and_link(dir, units, &compile, &link, exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runtime alone: a program that echoes stdin with every byte
    /// incremented, built and run under qemu (skipped without the tools).
    #[test]
    fn echo_through_the_runtime() {
        let tc = match crate::Toolchain::find(&crate::harness::TOOLS) {
            Ok(tc) => tc,
            Err(why) => {
                eprintln!("SKIPPED echo_through_the_runtime: {why}");
                return;
            }
        };
        let main = format!("{RUNTIME_H}{RUNTIME_C}void _start(void) {{ static unsigned char b[3]; while (read_exact(b, 3)) {{ for (int i = 0; i < 3; i++) b[i]++; write_all(b, 3); }} sys(SYS_EXIT, 0, 0, 0); for (;;) {{}} }}\n");
        let divs = format!(
            "{RUNTIME_H}{RUNTIME_C}void _start(void) {{ int x[4]; long long y[4]; unsigned u[2];\n\
             while (read_exact(x, 8)) {{ volatile int a = x[0], b = x[1]; x[0] = a / b; x[1] = a % b; write_all(x, 8);\n\
             volatile long long c = (long long)a * 100003, d = b; y[0] = c / d; y[1] = c % d; write_all(y, 16);\n\
             volatile unsigned e = (unsigned)a, f = (unsigned)b; u[0] = e / f; u[1] = e % f; write_all(u, 8); }}\n\
             sys(SYS_EXIT, 0, 0, 0); for (;;) {{}} }}\n"
        );
        let dir = std::env::temp_dir().join(format!("misaal-oracle-hvx-rt-{}", std::process::id()));
        let exe = dir.join("echo");
        build(&tc.cc, &tc.ld, &dir, &[("main".into(), main)], &[], &[], &exe).expect("builds");
        let mut child = Command::new(&tc.qemu).args(["-cpu", "v67"]).arg(&exe).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().expect("qemu");
        use std::io::Write;
        child.stdin.take().expect("piped").write_all(&[0, 1, 2, 250, 254, 255]).expect("write");
        let out = child.wait_with_output().expect("runs");
        assert!(out.status.success());
        assert_eq!(out.stdout, vec![1, 2, 3, 251, 255, 0]);
        // The division helpers against the host's C division.
        let exe = dir.join("divs");
        build(&tc.cc, &tc.ld, &dir, &[("divs".into(), divs)], &[], &[], &exe).expect("builds");
        let pairs: [(i32, i32); 6] = [(7, 2), (-7, 2), (7, -2), (-7, -2), (i32::MAX, 3), (-123456, 1000)];
        let mut input = Vec::new();
        let mut want = Vec::new();
        for (a, b) in pairs {
            input.extend(a.to_le_bytes());
            input.extend(b.to_le_bytes());
            want.extend((a / b).to_le_bytes());
            want.extend((a % b).to_le_bytes());
            let (c, d) = (a as i64 * 100003, b as i64);
            want.extend((c / d).to_le_bytes());
            want.extend((c % d).to_le_bytes());
            want.extend(((a as u32) / (b as u32)).to_le_bytes());
            want.extend(((a as u32) % (b as u32)).to_le_bytes());
        }
        let mut child = Command::new(&tc.qemu).args(["-cpu", "v67"]).arg(&exe).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().expect("qemu");
        child.stdin.take().expect("piped").write_all(&input).expect("write");
        let out = child.wait_with_output().expect("runs");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.status.success());
        assert_eq!(out.stdout, want);
    }
}
