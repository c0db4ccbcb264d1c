//! CPU: renders C, compiles it with the system C compiler into a shared object, loads it with
//! `libloading`. Compiled kernels are cached in memory and on disk (by source hash, under the
//! user's cache directory). The uncached kernels of one realize are compiled together: one
//! compiler process per batch, up to one batch per core, in parallel.

use super::device::{Device, DeviceMemory, Program};
use super::memory::HostMemory;
use crate::codegen::ProgramSpec;
use crate::error::{Error, Result};
use crate::helpers::{cache_dir, debug_level, stable_hash_hex};
use crate::renderer::cstyle::{c_dialect, CStyleRenderer};
use crate::renderer::{Renderer, Target};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

type KernelFn = unsafe extern "C" fn(*const *mut u8, *const i64, i32);

/// A C compiler and its flags.
#[derive(Clone, Debug)]
pub struct CCompiler {
    pub cc: String,
    pub flags: Vec<String>,
}

impl CCompiler {
    /// `CC` from the environment, or `cc`.
    pub fn from_env() -> CCompiler {
        let cc = std::env::var("CC").ok().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| "cc".into());
        CCompiler::new(&cc)
    }
    pub fn new(cc: &str) -> CCompiler {
        let flags = [
            "-O3",
            "-march=native",
            "-fPIC",
            "-shared",
            // Results must not depend on the compiler's choices: no FMA contraction, and
            // signed overflow wraps like the interpreter's integer arithmetic.
            "-ffp-contract=off",
            "-fwrapv",
            "-fno-math-errno",
            "-w",
        ];
        CCompiler { cc: cc.to_string(), flags: flags.iter().map(|s| s.to_string()).collect() }
    }

    /// Compiles C source (from stdin) into the shared object `out`.
    pub fn compile_to(&self, src: &str, out: &Path, kernels: &str) -> Result<()> {
        let fail = |message: String| Error::Compile { device: "CPU".into(), kernel: kernels.to_string(), message };
        let mut child = Command::new(&self.cc)
            .args(&self.flags)
            .args(["-x", "c", "-", "-o"])
            .arg(out)
            .arg("-lm")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                fail(format!(
                    "could not run the C compiler `{}`: {e}. Install gcc or clang (apt-get install gcc), \
                     or set CC to the path of a C compiler",
                    self.cc
                ))
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(src.as_bytes()).map_err(|e| fail(format!("writing to `{}` failed: {e}", self.cc)))?;
        }
        let output = child.wait_with_output().map_err(|e| fail(format!("`{}` did not finish: {e}", self.cc)))?;
        if !output.status.success() {
            let mut message = format!(
                "the C compiler `{}` failed ({}):\n{}\nSet CC to another C compiler (gcc or clang) to choose another.",
                self.cc,
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
            if debug_level() >= 1 {
                message.push_str("\nsource:\n");
                message.push_str(src);
            }
            return Err(fail(message));
        }
        Ok(())
    }
}

/// A raw pointer that may cross to the pool's threads (see the SAFETY note at its use).
#[derive(Clone, Copy)]
struct SendPtr<T>(*const T);
// SAFETY: only used to pass kernel argument arrays to pool threads for the duration of a
// launch, during which the arrays are alive and not mutated.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above; the arrays are only read.
unsafe impl<T> Sync for SendPtr<T> {}

/// A kernel loaded from a shared object.
pub struct CpuProgram {
    name: String,
    threads: usize,
    func: KernelFn,
    // Keeps the shared object mapped while `func` may be called.
    _lib: Arc<libloading::Library>,
}

impl Program for CpuProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        let ptrs: Vec<*mut u8> = bufs.iter().map(|b| b.downcast::<HostMemory>().as_ptr()).collect();
        let start = wait.then(std::time::Instant::now);
        let (ptrs, vals) = (SendPtr(ptrs.as_ptr()), SendPtr(vals.as_ptr()));
        let func = self.func;
        let run_core = move |core: usize| {
            let (p, v) = (&ptrs, &vals);
            // SAFETY: `func` was compiled from a kernel whose loads and stores stay inside the
            // buffers the scheduler gave it, with one pointer per DEFINE_GLOBAL and one value per
            // DEFINE_VAR, which is what `bufs` and `vals` hold; both outlive this launch (the
            // pool returns only when every core is done). Cores write disjoint parts of the
            // output (the THREAD axis splits an output axis). `_lib` keeps the code mapped.
            unsafe { func(p.0, v.0, core as i32) };
        };
        super::threadpool::ThreadPool::global().run(self.threads, &run_core);
        let _ = &self.name;
        Ok(start.map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0))
    }
}

pub struct CpuDevice {
    renderer: CStyleRenderer,
    compiler: CCompiler,
    cache: Mutex<HashMap<String, Arc<CpuProgram>>>,
    disk: PathBuf,
}

impl Default for CpuDevice {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuDevice {
    pub fn new() -> CpuDevice {
        CpuDevice::with_compiler(CCompiler::from_env())
    }
    pub fn with_compiler(compiler: CCompiler) -> CpuDevice {
        CpuDevice {
            renderer: CStyleRenderer::new(c_dialect(), Target::cpu("CPU")),
            compiler,
            cache: Mutex::new(HashMap::new()),
            disk: cache_dir().join("cpu"),
        }
    }

    /// Uses `dir` for the on-disk kernel cache instead of the user's cache directory.
    pub fn with_cache_dir(mut self, dir: PathBuf) -> CpuDevice {
        self.disk = dir;
        self
    }

    fn key(&self, src: &str) -> String {
        let flags = self.compiler.flags.join(" ");
        stable_hash_hex(&[self.compiler.cc.as_bytes(), flags.as_bytes(), src.as_bytes()])
    }

    fn load(&self, path: &Path, specs: &[&ProgramSpec]) -> Result<Vec<Arc<CpuProgram>>> {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let err = |message: String| Error::Compile { device: "CPU".into(), kernel: names.join(", "), message };
        // SAFETY: the library is one we compiled from generated kernel C; it has no
        // initializers that could misbehave when loaded.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| err(format!("loading {path:?}: {e}")))?;
        let lib = Arc::new(lib);
        specs
            .iter()
            .map(|spec| {
                let name = &spec.name;
                // SAFETY: the symbol is the kernel entry we rendered, with exactly this
                // signature: `void name(void** bufs, const long long* vals)`.
                let func: KernelFn =
                    unsafe { *lib.get::<KernelFn>(name.as_bytes()).map_err(|e| err(format!("symbol {name}: {e}")))? };
                Ok(Arc::new(CpuProgram {
                    name: name.to_string(),
                    threads: spec.threads.max(1),
                    func,
                    _lib: lib.clone(),
                }))
            })
            .collect()
    }

    /// Compiles one batch of `(key, spec)` into a single shared object, then links it under each
    /// kernel's own key in the disk cache.
    fn compile_batch(&self, batch: &[(String, Arc<ProgramSpec>)]) -> Result<Vec<Arc<CpuProgram>>> {
        let prelude = c_dialect().prelude;
        let mut src = String::from(prelude);
        for (_, spec) in batch {
            src.push_str(spec.src.strip_prefix(prelude).unwrap_or(&spec.src));
        }
        let names: Vec<&str> = batch.iter().map(|(_, s)| s.name.as_str()).collect();
        std::fs::create_dir_all(&self.disk)?;
        let batch_key = stable_hash_hex(&[src.as_bytes()]);
        // Unique per call: two threads may compile the same batch at once.
        static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self.disk.join(format!("tmp-{batch_key}-{}-{serial}.so", std::process::id()));
        self.compiler.compile_to(&src, &tmp, &names.join(", "))?;
        for (key, _) in batch {
            let dst = self.disk.join(format!("{key}.so"));
            // A hard link is cheap; fall back to a copy on file systems without links.
            if std::fs::hard_link(&tmp, &dst).is_err() && !dst.exists() {
                let _ = std::fs::copy(&tmp, &dst);
            }
        }
        let specs: Vec<&ProgramSpec> = batch.iter().map(|(_, s)| s.as_ref()).collect();
        let progs = self.load(&tmp, &specs);
        let _ = std::fs::remove_file(&tmp);
        progs
    }
}

impl Device for CpuDevice {
    fn name(&self) -> &str {
        "CPU"
    }
    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let m = HostMemory::new(bytes).ok_or(Error::OutOfMemory { device: "CPU".into(), bytes })?;
        Ok(DeviceMemory { bytes, inner: Box::new(m) })
    }
    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        dst.downcast::<HostMemory>().as_mut_slice().copy_from_slice(src);
        Ok(())
    }
    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        dst.copy_from_slice(src.downcast::<HostMemory>().as_slice());
        Ok(())
    }
    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        let keys: Vec<String> = specs.iter().map(|s| self.key(&s.src)).collect();
        let mut found: HashMap<String, Arc<CpuProgram>> = HashMap::new();
        let mut todo: Vec<(String, Arc<ProgramSpec>)> = Vec::new();
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (key, spec) in keys.iter().zip(specs) {
                if let Some(p) = cache.get(key) {
                    found.insert(key.clone(), p.clone());
                } else if !todo.iter().any(|(k, _)| k == key) {
                    todo.push((key.clone(), spec.clone()));
                }
            }
        }
        // Disk cache.
        todo.retain(|(key, spec)| {
            let path = self.disk.join(format!("{key}.so"));
            match path.exists().then(|| self.load(&path, &[spec.as_ref()])) {
                Some(Ok(mut p)) => {
                    found.insert(key.clone(), p.remove(0));
                    false
                }
                _ => true,
            }
        });
        // Batches: one per core, round-robin; names must be unique within one shared object.
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let mut batches: Vec<Vec<(String, Arc<ProgramSpec>)>> = vec![Vec::new(); cores.min(todo.len())];
        for (i, item) in todo.into_iter().enumerate() {
            let n = batches.len();
            let free = (0..n).map(|k| (i + k) % n).find(|&k| !batches[k].iter().any(|(_, s)| s.name == item.1.name));
            match free {
                Some(k) => batches[k].push(item),
                None => batches.push(vec![item]),
            }
        }
        let results: Vec<Result<Vec<Arc<CpuProgram>>>> = std::thread::scope(|s| {
            let handles: Vec<_> = batches.iter().map(|b| s.spawn(|| self.compile_batch(b))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Other("compiler thread panicked".into()))))
                .collect()
        });
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        for (batch, res) in batches.iter().zip(results) {
            for ((key, _), prog) in batch.iter().zip(res?) {
                cache.insert(key.clone(), prog.clone());
                found.insert(key.clone(), prog);
            }
        }
        for (key, p) in &found {
            cache.entry(key.clone()).or_insert_with(|| p.clone());
        }
        Ok(keys.iter().map(|k| found[k].clone() as Arc<dyn Program>).collect())
    }
}
