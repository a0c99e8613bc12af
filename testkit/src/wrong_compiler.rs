//! A `misaal` that compiles wrongly on purpose, for the bench tests that
//! force a mismatch and check that its artifacts are kept (x86's
//! `bench_cli`, HVX's `hvx_bench`). The bench runs it through
//! `--compiler`.

use std::path::{Path, PathBuf};

/// The kernel the wrapper corrupts and how: `misaal_<kernel>` is renamed
/// `misaal_<kernel>_right`, and a new `misaal_<kernel>(params)` calls it
/// with `args` and then runs `corrupt` (C statements on the outputs).
pub struct Corruption<'a> {
    pub kernel: &'a str,
    pub params: &'a str,
    pub args: &'a str,
    pub corrupt: &'a str,
}

/// Writes `dir/wrong-misaal.sh`, executable: it runs `misaal` with its
/// arguments, and when the `--name` is `misaal_<kernel>`, rewrites the C
/// written to `-o` as `c` says. Returns the script's path.
pub fn write_wrong_compiler(dir: &Path, misaal: &str, c: &Corruption) -> std::io::Result<PathBuf> {
    let Corruption { kernel, params, args, corrupt } = c;
    let script = format!(
        r#"#!/bin/sh
set -e
'{misaal}' "$@"
prev= out= name=
for a in "$@"; do
  case "$prev" in -o) out=$a ;; --name) name=$a ;; esac
  prev=$a
done
if [ "$name" = misaal_{kernel} ]; then
  sed -i 's/\bmisaal_{kernel}(/misaal_{kernel}_right(/' "$out"
  cat >> "$out" <<'EOF'
/* wrong-misaal.sh: ours made wrong on purpose */
int misaal_{kernel}({params}) {{
  int r = misaal_{kernel}_right({args});
  {corrupt}
  return r;
}}
EOF
fi
"#
    );
    let path = dir.join("wrong-misaal.sh");
    std::fs::write(&path, script)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}
