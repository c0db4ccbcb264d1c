//! CPU: renders C, compiles it with the system C compiler into a shared object, loads it with
//! `libloading`. Compiled kernels are cached in memory and on disk (by source hash, under the
//! user's cache directory; see `compile_cache`). The uncached kernels of one realize are
//! compiled together: one compiler process (one shared object) per group, up to one group per
//! core, in parallel.

use super::backend::{Backend, DeviceMemory, Program};
use super::compile_cache::{CompileCache, Todo};
use super::disk_cache::{is_complete_elf_shared_object, DiskCache};
use super::memory::HostMemory;
use super::threadpool::ThreadPool;
use crate::error::{Error, Result};
use crate::helpers::{cache_dir, stable_hash_hex};
use crate::renderer::cstyle::{c_dialect, CStyleRenderer};
use crate::renderer::ProgramSpec;
use crate::renderer::{Renderer, Target};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use super::cc::{CCompiler, CcFamily, RUNGS};

pub(super) type KernelFn = unsafe extern "C" fn(*const *mut u8, *const i64, i32);

/// A raw pointer that may cross to the pool's threads (see the SAFETY note at its use).
#[derive(Clone, Copy)]
pub(super) struct SendPtr<T>(pub(super) *const T);
// SAFETY: only used to pass kernel argument arrays to pool threads for the duration of a
// launch, during which the arrays are alive and not mutated.
unsafe impl<T> Send for SendPtr<T> {}
// SAFETY: as above; the arrays are only read.
unsafe impl<T> Sync for SendPtr<T> {}

/// A kernel loaded from a shared object.
pub struct CpuProgram {
    pub(super) name: String,
    device: Arc<str>,
    pub(super) pool: &'static ThreadPool,
    pub(super) threads: usize,
    /// The kernel reads `bufs[k]` for its buffer parameters `k < bufs_needed` and one value per
    /// DEFINE_VAR: `launch` (and a graph, `cpu_graph.rs`) refuses fewer buffers or another
    /// number of values.
    pub(super) bufs_needed: usize,
    pub(super) var_count: usize,
    pub(super) func: KernelFn,
    // Keeps the shared object mapped while `func` may be called.
    _lib: Arc<libloading::Library>,
}

impl Program for CpuProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        if bufs.len() < self.bufs_needed || vals.len() != self.var_count {
            return Err(Error::Launch {
                device: self.device.to_string(),
                kernel: self.name.clone(),
                message: format!(
                    "{} buffers and {} variable values given, the kernel takes {} and {}",
                    bufs.len(),
                    vals.len(),
                    self.bufs_needed,
                    self.var_count
                ),
            });
        }
        let ptrs: Vec<*mut u8> = bufs.iter().map(|b| b.downcast::<HostMemory>().as_ptr()).collect();
        let start = wait.then(std::time::Instant::now);
        let (ptrs, vals) = (SendPtr(ptrs.as_ptr()), SendPtr(vals.as_ptr()));
        let func = self.func;
        let run_core = move |core: usize| {
            let (p, v) = (&ptrs, &vals);
            // SAFETY: `func` was compiled from a kernel whose loads and stores stay inside the
            // buffers the scheduler gave it; it reads `bufs[k]` for its buffer parameters
            // (`k < bufs_needed <= bufs.len()`, checked above) and one value per DEFINE_VAR
            // (`vals.len() == var_count`, checked above); both outlive this launch (the
            // pool returns only when every core is done). Cores write disjoint parts of the
            // output (the THREAD axis splits an output axis). `launch` holds
            // `host_execution_lock`, so no other kernel or copy touches host memory meanwhile.
            // `_lib` keeps the code mapped.
            unsafe { func(p.0, v.0, core as i32) };
        };
        // No other kernel or copy touches host memory meanwhile (see `HostMemory`).
        let _lock = super::memory::host_execution_lock();
        self.pool.run(self.threads, &run_core);
        Ok(start.map(|s| s.elapsed().as_secs_f64()).unwrap_or(0.0))
    }
}

pub struct CpuDevice {
    /// `CPU`, or `CPU:N` for the N-th (N > 0): same memory, compiler and kernels, its own
    /// worker threads.
    name: Arc<str>,
    pool: &'static ThreadPool,
    renderer: CStyleRenderer,
    /// The compiler at its current rung (the self-test may move it down the ladder).
    compiler: std::sync::RwLock<CCompiler>,
    /// Programs loaded in this process (held weakly: a shared object is unloaded once no
    /// program of it is in use).
    cache: CompileCache<CpuProgram>,
    disk: DiskCache,
}

impl Default for CpuDevice {
    fn default() -> Self {
        Self::new()
    }
}

/// Opens the CPU device `CPU` or `CPU:N` (the registry's opener; the name is canonical).
pub fn open(name: &str) -> Result<Arc<dyn Backend>> {
    let index = match name.split_once(':') {
        None => 0,
        Some((_, n)) => n.parse::<usize>().map_err(|_| Error::DeviceUnavailable {
            device: name.to_string(),
            reason: "a CPU device is `CPU` or `CPU:N` with a number N".into(),
        })?,
    };
    Ok(Arc::new(CpuDevice::new().numbered(index)))
}

impl CpuDevice {
    pub fn new() -> CpuDevice {
        CpuDevice::with_compiler(CCompiler::from_env())
    }
    pub fn with_compiler(compiler: CCompiler) -> CpuDevice {
        CpuDevice {
            name: Arc::from("CPU"),
            pool: ThreadPool::global(),
            renderer: CStyleRenderer::new(c_dialect(), Target::cpu("CPU")),
            compiler: std::sync::RwLock::new(compiler),
            cache: CompileCache::default(),
            disk: DiskCache::new(cache_dir().join("cpu"), "so"),
        }
    }

    /// The device `CPU:index` (`CPU` for 0): the same kernels on worker threads of its own.
    pub fn numbered(mut self, index: usize) -> CpuDevice {
        self.name = if index == 0 { Arc::from("CPU") } else { Arc::from(format!("CPU:{index}")) };
        self.pool = ThreadPool::of_device(index);
        self
    }

    /// Uses `dir` for the on-disk kernel cache instead of the user's cache directory.
    pub fn with_cache_dir(mut self, dir: PathBuf) -> CpuDevice {
        self.disk = DiskCache::new(dir, "so");
        self
    }

    /// The compiler as it compiles now (at the rung the self-test chose).
    pub fn compiler(&self) -> CCompiler {
        self.compiler.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn key(compiler: &CCompiler, src: &str) -> String {
        stable_hash_hex(&[compiler.identity().as_bytes(), src.as_bytes()])
    }

    fn load(&self, path: &Path, specs: &[&ProgramSpec]) -> Result<Vec<Arc<CpuProgram>>> {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let err = |message: String| Error::Compile { device: self.name.to_string(), kernel: names.join(", "), message };
        // SAFETY: the library is one this process or an earlier one compiled from generated
        // kernel C (the disk cache only hands out complete ELF shared objects); it has no
        // initializers that could misbehave when loaded.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| err(format!("loading {path:?}: {e}")))?;
        let lib = Arc::new(lib);
        specs
            .iter()
            .map(|spec| {
                let name = &spec.name;
                // SAFETY: the symbol is the kernel entry we rendered, with exactly this
                // signature: `void name(void** bufs, const long long* vals, int core_id)`.
                let func: KernelFn =
                    unsafe { *lib.get::<KernelFn>(name.as_bytes()).map_err(|e| err(format!("symbol {name}: {e}")))? };
                Ok(Arc::new(CpuProgram {
                    name: name.to_string(),
                    device: self.name.clone(),
                    pool: self.pool,
                    threads: spec.threads.max(1),
                    bufs_needed: spec.buffer_params().last().map_or(0, |&k| k + 1),
                    var_count: spec.vars.len(),
                    func,
                    _lib: lib.clone(),
                }))
            })
            .collect()
    }

    /// Compiles one batch of `(key, spec)` into a single shared object, then stores it under
    /// each kernel's own key in the disk cache.
    fn compile_batch(&self, compiler: &CCompiler, batch: &[Todo]) -> Result<Vec<Arc<CpuProgram>>> {
        let prelude = c_dialect().prelude;
        let mut src = String::from(prelude);
        for (_, spec) in batch {
            src.push_str(spec.src.strip_prefix(prelude).unwrap_or(&spec.src));
        }
        let names: Vec<&str> = batch.iter().map(|(_, s)| s.name.as_str()).collect();
        let batch_key = stable_hash_hex(&[src.as_bytes()]);
        let tmp = self
            .disk
            .temp_path(&batch_key[..16])
            .map_err(|e| Error::File { path: self.disk.dir().into(), source: e })?;
        compiler.compile_to(&src, &tmp, &names.join(", "))?;
        let keys: Vec<&str> = batch.iter().map(|(k, _)| k.as_str()).collect();
        self.disk.store_file(&tmp, &keys);
        let specs: Vec<&ProgramSpec> = batch.iter().map(|(_, s)| s.as_ref()).collect();
        let progs = self.load(&tmp, &specs);
        let _ = std::fs::remove_file(&tmp);
        progs
    }
}

impl Backend for CpuDevice {
    fn name(&self) -> &str {
        &self.name
    }
    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let m = HostMemory::new(bytes).ok_or(Error::OutOfMemory { device: self.name.to_string(), bytes })?;
        Ok(DeviceMemory { bytes, inner: Box::new(m) })
    }
    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        dst.downcast::<HostMemory>().copy_from(src);
        Ok(())
    }
    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        src.downcast::<HostMemory>().copy_to(dst);
        Ok(())
    }
    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }

    fn compiler_identity(&self) -> Option<String> {
        Some(self.compiler().identity())
    }

    fn compiler_rungs(&self) -> usize {
        RUNGS.len()
    }

    fn set_compiler_rung(&self, rung: usize) {
        let mut compiler = self.compiler.write().unwrap_or_else(|e| e.into_inner());
        *compiler = compiler.with_rung(rung);
    }

    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        // One compiler (one rung) for the whole batch, even if the rung changes meanwhile.
        let compiler = self.compiler();
        let keys: Vec<String> = specs.iter().map(|s| Self::key(&compiler, &s.src)).collect();
        // Disk cache: only complete shared objects are loaded.
        let from_disk = |key: &str, spec: &ProgramSpec| {
            let path = self.disk.lookup(key, is_complete_elf_shared_object)?;
            self.load(&path, &[spec]).ok().map(|mut p| p.remove(0))
        };
        let build = |group: &[Todo]| {
            COMPILER_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.compile_batch(&compiler, group)
        };
        let progs = self.cache.get_or_build(&keys, specs, from_disk, build)?;
        Ok(progs.into_iter().map(|p| p as Arc<dyn Program>).collect())
    }
}

static COMPILER_RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Number of C compiler processes this process has run (0 when every kernel came from the
/// disk cache).
pub fn compiler_runs() -> usize {
    COMPILER_RUNS.load(std::sync::atomic::Ordering::Relaxed)
}
