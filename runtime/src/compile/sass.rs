//! A SASS instruction census of a cubin, from `cuobjdump --dump-sass`.
//!
//! cuobjdump 13.5 disassembles sm_80 and sm_90 cubins by itself (no
//! nvdisasm needed). Its output, per function:
//!
//! ```text
//!     code for sm_90
//!     .target sm_90
//!
//!         Function : probe
//!     .headerflags @"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
//!         /*0100*/                   LDG.E.128 R4, desc[UR8][R8.64] ;   /* 0x0000000808047981 */
//!                                                                       /* 0x000ea2000c1e1d00 */
//!         /*0130*/              @!PT LDS RZ, [RZ] ;                     /* 0x00000000fffff984 */
//! ```
//!
//! Instructions predicated on `@!PT` (never executed; ptxas emits them as
//! padding, e.g. three `@!PT LDS RZ, [RZ]` before an `LDGSTS`) and `NOP`s
//! are not counted anywhere.

use super::CompileError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Instruction counts by access width. 8/16-bit cover the `U8`/`S8` and
/// `U16`/`S16` forms; an instruction with no width modifier is 32-bit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WidthCounts {
    /// `.U8` / `.S8`.
    pub b8: u32,
    /// `.U16` / `.S16`.
    pub b16: u32,
    /// No width modifier.
    pub b32: u32,
    /// `.64`.
    pub b64: u32,
    /// `.128`.
    pub b128: u32,
}

impl WidthCounts {
    /// All widths together.
    pub fn total(&self) -> u32 {
        self.b8 + self.b16 + self.b32 + self.b64 + self.b128
    }

    fn add(&mut self, modifiers: &[&str]) {
        let slot = if modifiers.contains(&"128") {
            &mut self.b128
        } else if modifiers.contains(&"64") {
            &mut self.b64
        } else if modifiers.iter().any(|m| *m == "U16" || *m == "S16") {
            &mut self.b16
        } else if modifiers.iter().any(|m| *m == "U8" || *m == "S8") {
            &mut self.b8
        } else {
            &mut self.b32
        };
        *slot += 1;
    }
}

/// Instruction census of one function in a cubin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SassSummary {
    /// Symbol name as cuobjdump prints it (mangled for C++ linkage).
    pub function: String,
    /// `sm_90` etc., from cuobjdump's `code for` line.
    pub arch: String,
    /// Instructions, excluding `NOP`s and `@!PT` (never-executed) ones.
    pub instructions: u32,
    /// Global loads `LDG` (any cache modifiers, e.g. `LDG.E.U8.CONSTANT`).
    pub ldg: WidthCounts,
    /// `LDGSTS`: global→shared async copies (`cp.async`).
    pub ldgsts: u32,
    /// Shared loads `LDS`.
    pub lds: WidthCounts,
    /// `LDSM` (`ldmatrix`).
    pub ldsm: u32,
    /// Shared stores `STS`.
    pub sts: WidthCounts,
    /// Local-memory loads `LDL` (spills, run-time indexed arrays).
    pub ldl: u32,
    /// Local-memory stores `STL`.
    pub stl: u32,
    /// `IMMA.16816.S8.S8` (`mma.sync.m16n8k16` s8·s8→s32).
    pub imma_16816_s8: u32,
    /// `IMMA.16832.S8.S8` (`mma.sync.m16n8k32` s8·s8→s32).
    pub imma_16832_s8: u32,
    /// `IGMMA.64x*x32.S8.S8` (`wgmma.mma_async m64nNk32` s8·s8→s32, sm_90a).
    pub igmma_s8: u32,
    /// `HGMMA.64x*x16.F32` (`wgmma.mma_async m64nNk16` f16·f16→f32, sm_90a).
    pub hgmma_f32: u32,
    /// `IDP.4A` (`__dp4a`).
    pub idp4a: u32,
    /// Integer→float conversions: `I2F*` (sm_80) and `I2FP*` (sm_90).
    pub int_to_float: u32,
    /// Float→integer conversions: `F2I*`, `F2IP*`.
    pub float_to_int: u32,
    /// Barriers: `BAR.*` (`BAR.SYNC.DEFER_BLOCKING` for `__syncthreads`).
    pub bar: u32,
    /// `FFMA` (should be 0 in kernels compiled with `--fmad=false` unless
    /// written as explicit `fmaf`/`__fmaf_rn`).
    pub ffma: u32,
    /// Every counted opcode with its modifiers (`LDG.E.128.CONSTANT`), for
    /// checks the fields above do not cover.
    pub opcodes: BTreeMap<String, u32>,
}

impl SassSummary {
    fn record(&mut self, opcode: &str) {
        self.instructions += 1;
        *self.opcodes.entry(opcode.to_string()).or_insert(0) += 1;
        let mut parts = opcode.split('.');
        let base = parts.next().unwrap_or("");
        let mods: Vec<&str> = parts.collect();
        match base {
            "LDG" => self.ldg.add(&mods),
            "LDGSTS" => self.ldgsts += 1,
            "LDS" => self.lds.add(&mods),
            "LDSM" => self.ldsm += 1,
            "STS" => self.sts.add(&mods),
            "LDL" => self.ldl += 1,
            "STL" => self.stl += 1,
            "IDP" if mods.first() == Some(&"4A") => self.idp4a += 1,
            "IMMA" if opcode.starts_with("IMMA.16816.S8.S8") => self.imma_16816_s8 += 1,
            "IMMA" if opcode.starts_with("IMMA.16832.S8.S8") => self.imma_16832_s8 += 1,
            "IGMMA" if opcode.ends_with("x32.S8.S8") => self.igmma_s8 += 1,
            "HGMMA" if opcode.contains("x16.F32") => self.hgmma_f32 += 1,
            "I2F" | "I2FP" => self.int_to_float += 1,
            "F2I" | "F2IP" => self.float_to_int += 1,
            "BAR" => self.bar += 1,
            "FFMA" => self.ffma += 1,
            _ => {}
        }
    }
}

/// The opcode of a `/*0100*/  @P0 LDG.E.128 R4, [...] ;  /* 0x... */` line,
/// or `None` for any other line, `NOP`, and `@!PT` instructions.
fn instruction_opcode(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("/*")?;
    let (addr, rest) = rest.split_once("*/")?;
    if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None; // the `/* 0x... */` encoding lines
    }
    let (text, _) = rest.split_once(';')?;
    let mut tokens = text.split_whitespace();
    let mut opcode = tokens.next()?;
    if let Some(predicate) = opcode.strip_prefix('@') {
        if predicate == "!PT" {
            return None;
        }
        opcode = tokens.next()?;
    }
    (opcode != "NOP").then_some(opcode)
}

/// Parses `cuobjdump --dump-sass` output into one summary per function, in
/// dump order.
pub fn parse_sass(dump: &str) -> Vec<SassSummary> {
    let mut out: Vec<SassSummary> = Vec::new();
    let mut arch = String::new();
    for line in dump.lines() {
        let t = line.trim();
        if let Some(a) = t.strip_prefix("code for ") {
            arch = a.trim().to_string();
        } else if let Some(f) = t.strip_prefix("Function : ") {
            out.push(SassSummary {
                function: f.trim().to_string(),
                arch: arch.clone(),
                ..Default::default()
            });
        } else if let (Some(op), Some(cur)) = (instruction_opcode(line), out.last_mut()) {
            cur.record(op);
        }
    }
    out
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// Where `cuobjdump` is: `$CUOBJDUMP` if set (an error if it is not a
/// file), else the first `cuobjdump` on `PATH`, else one in the folder
/// `$NVDISASM_PATH` names (or next to the file it names); `None` if none.
pub fn find_cuobjdump() -> Result<Option<PathBuf>, CompileError> {
    if let Some(p) = std::env::var_os("CUOBJDUMP").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(p);
        return if path.is_file() {
            Ok(Some(path))
        } else {
            Err(CompileError::CuobjdumpMisconfigured { path })
        };
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join("cuobjdump");
            if is_executable(&candidate) {
                return Ok(Some(candidate));
            }
        }
    }
    if let Some(p) = std::env::var_os("NVDISASM_PATH").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        let dir = if p.is_dir() {
            Some(p)
        } else {
            p.parent().map(Path::to_path_buf)
        };
        if let Some(candidate) = dir.map(|d| d.join("cuobjdump")) {
            if is_executable(&candidate) {
                return Ok(Some(candidate));
            }
        }
    }
    Ok(None)
}

/// A cubin written to a unique temp file, removed on drop.
struct TempCubin(PathBuf);

impl TempCubin {
    fn write(cubin: &[u8]) -> Result<Self, CompileError> {
        use std::io::Write;
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "mmqgen-{}-{}-{nanos}.cubin",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let io = |source| CompileError::Io {
            what: format!("could not write the cubin to {}", path.display()),
            source,
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io)?;
        let guard = TempCubin(path.clone());
        f.write_all(cubin).map_err(io)?;
        Ok(guard)
    }
}

impl Drop for TempCubin {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Disassembles `cubin` with cuobjdump and summarises each function.
/// `Ok(None)` when no cuobjdump is found (see [`find_cuobjdump`]).
pub fn sass_summary(cubin: &[u8]) -> Result<Option<Vec<SassSummary>>, CompileError> {
    Ok(sass_dump(cubin)?.map(|dump| parse_sass(&dump)))
}

/// `cuobjdump --dump-sass` of `cubin`, as it prints it. `Ok(None)` when no cuobjdump is found.
pub fn sass_dump(cubin: &[u8]) -> Result<Option<String>, CompileError> {
    let Some(tool) = find_cuobjdump()? else {
        return Ok(None);
    };
    let file = TempCubin::write(cubin)?;
    let output = Command::new(&tool)
        .arg("--dump-sass")
        .arg(&file.0)
        .output()
        .map_err(|source| CompileError::Io {
            what: format!("could not run {}", tool.display()),
            source,
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let first_line = stderr
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("no message")
            .to_string();
        let hint = if std::env::var_os("NVDISASM_PATH").is_some() {
            " (NVDISASM_PATH is set, so cuobjdump ran $NVDISASM_PATH/nvdisasm; \
             cuobjdump 13.5 needs no nvdisasm for sm_80/sm_90, unset it)"
                .to_string()
        } else {
            String::new()
        };
        return Err(CompileError::CuobjdumpFailed {
            tool,
            status: match output.status.code() {
                Some(code) => format!("exit status {code}"),
                None => output.status.to_string(),
            },
            first_line,
            hint,
            stderr,
        });
    }
    Ok(Some(String::from_utf8_lossy(&output.stdout).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::nvrtc::compile_cubin;
    use crate::testing::{cuobjdump_or_skip, nvrtc_or_skip};

    /// Real `cuobjdump 13.5 --dump-sass` output of NVRTC 13.0 sm_90 cubins,
    /// cut down to interesting instructions (each kept with its encoding
    /// line); the last function was renamed from `mmak` (same source built
    /// without `--fmad=false`).
    const EXCERPT: &str = include_str!("testdata/cuobjdump_13.5_sm90_excerpt.sass");

    #[test]
    fn parses_captured_dump() {
        let s = parse_sass(EXCERPT);
        let names: Vec<_> = s.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(
            names,
            ["probe", "mmak", "heavy", "_Z2tkILi3EEvPfPKf", "mmak_fmad"]
        );
        assert!(s.iter().all(|f| f.arch == "sm_90"));

        let probe = &s[0];
        assert_eq!(
            probe.ldg,
            WidthCounts {
                b128: 1,
                ..Default::default()
            }
        );
        assert_eq!(probe.ldgsts, 1);
        assert_eq!(
            probe.lds,
            WidthCounts {
                b32: 3,
                ..Default::default()
            },
            "@!PT LDS not counted"
        );
        assert_eq!(probe.sts.b32, 1);
        assert_eq!(probe.idp4a, 2);
        assert_eq!(probe.bar, 2);
        assert_eq!(probe.int_to_float, 1);
        // 20 kept lines minus 3 `@!PT` and 2 NOPs.
        assert_eq!(probe.instructions, 15);
        assert_eq!(probe.opcodes["LDGSTS.E.BYPASS.128"], 1);
        assert!(!probe.opcodes.contains_key("NOP"));

        let mmak = &s[1];
        assert_eq!(
            mmak.ldg,
            WidthCounts {
                b8: 2,
                b16: 2,
                b32: 3,
                ..Default::default()
            }
        );
        assert_eq!((mmak.sts.b8, mmak.sts.b16), (1, 1));
        assert_eq!((mmak.lds.b8, mmak.lds.b16), (1, 1));
        assert_eq!(mmak.ldsm, 1);
        assert_eq!((mmak.imma_16816_s8, mmak.imma_16832_s8), (1, 1));
        assert_eq!((mmak.int_to_float, mmak.float_to_int), (2, 1));
        assert_eq!(mmak.ffma, 0);

        assert_eq!((s[2].stl, s[2].ldl), (2, 2));
        assert_eq!(s[3].stl, 1);
        assert_eq!(s[4].ffma, 1);
    }

    #[test]
    fn warpgroup_mmas_are_told_apart() {
        let mut s = SassSummary::default();
        for opcode in [
            "IGMMA.64x64x32.S8.S8",
            "HGMMA.64x64x16.F32",
            "HGMMA.64x128x16.F32",
            "HGMMA.64x64x16.F16",
        ] {
            s.record(opcode);
        }
        // int8 wgmma (s32 out) and f16 wgmma with f32 accumulation; f16 accumulation is neither.
        assert_eq!((s.igmma_s8, s.hgmma_f32), (1, 2));
    }

    #[test]
    fn instruction_lines() {
        assert_eq!(
            instruction_opcode(
                "        /*0100*/   LDG.E.128 R4, desc[UR8][R8.64] ;  /* 0x0000000808047981 */"
            ),
            Some("LDG.E.128")
        );
        assert_eq!(
            instruction_opcode("  /*0010*/   @P0 BRA 0x360;  /* 0xfffffffc00fc7947 */"),
            Some("BRA")
        );
        assert_eq!(
            instruction_opcode("  /*0130*/  @!PT LDS RZ, [RZ] ;  /* 0x0 */"),
            None
        );
        assert_eq!(instruction_opcode("  /*0370*/  NOP;  /* 0x0 */"), None);
        assert_eq!(
            instruction_opcode("          /* 0x000fe20000000800 */"),
            None
        );
        assert_eq!(instruction_opcode("\t\tFunction : probe"), None);
    }

    /// A 16-byte load, a cp.async and a dp4a, compiled for real and
    /// disassembled with the installed cuobjdump.
    const TINY: &str = r#"
struct __align__(16) u4 { unsigned x, y, z, w; };
extern "C" __global__ void tiny(const u4* __restrict__ src, const int* __restrict__ a,
                                const int* __restrict__ b, int* __restrict__ out) {
    __shared__ __align__(16) u4 tile[64];
    unsigned t = threadIdx.x;
    u4 v = src[t];
    unsigned saddr = (unsigned)__cvta_generic_to_shared(&tile[t]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(saddr), "l"(src + 64 + t));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    int acc = __dp4a(a[t], b[t], (int)(v.x ^ v.y ^ v.z ^ v.w));
    out[t] = acc + (int)tile[t ^ 1].x;
}
"#;

    #[test]
    fn tiny_kernel_census() {
        if !nvrtc_or_skip("tiny_kernel_census") || !cuobjdump_or_skip("tiny_kernel_census") {
            return;
        }
        for arch in ["sm_80", "sm_90"] {
            let compiled = compile_cubin(TINY, "tiny.cu", arch, false).unwrap();
            let sass = sass_summary(&compiled.cubin)
                .unwrap()
                .expect("cuobjdump was found above");
            assert_eq!(sass.len(), 1, "{sass:?}");
            let s = &sass[0];
            assert_eq!((s.function.as_str(), s.arch.as_str()), ("tiny", arch));
            assert!(s.ldg.b128 >= 1, "{arch}: {s:#?}");
            assert!(s.ldgsts >= 1, "{arch}: {s:#?}");
            assert!(s.idp4a >= 1, "{arch}: {s:#?}");
            assert!(s.bar >= 1, "{arch}: {s:#?}");
            assert_eq!(s.ffma, 0);
        }
    }

    #[test]
    fn garbage_cubin_is_a_typed_error() {
        if !cuobjdump_or_skip("garbage_cubin_is_a_typed_error") {
            return;
        }
        let err = sass_summary(b"definitely not an ELF file").unwrap_err();
        assert!(matches!(err, CompileError::CuobjdumpFailed { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.starts_with("cuobjdump ("), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}
