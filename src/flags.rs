//! Every environment variable ferrograd reads, with its default and meaning. Code reads them
//! through `int` and `text` (a name missing from the table is a bug, caught the first time the
//! code runs), and the README's table is checked against this one (`tests/flags.rs`).

/// One environment variable.
pub struct Flag {
    pub name: &'static str,
    /// The value when unset ("" for none).
    pub default: &'static str,
    pub doc: &'static str,
}

pub const FLAGS: &[Flag] = &[
    Flag {
        name: "DEBUG",
        default: "0",
        doc: "1: kernels scheduled per realize, compile time, the compiler flags the self-test chose; 2: one `***` line per kernel run (device, name, time, GFLOPS, GB/s); 3: the optimizations applied, in the `OPTS=` syntax of `examples/matmul_opts` (`T0:2 U1:16 R2:4 V4:8`, with the vector axis `V` and FMA chains `F` spelled out, so the line rebuilds the kernel); 4: generated source; 5: the kernel AST; 6: the kernel after each named codegen pass (`codegen/passes.rs`)",
    },
    Flag { name: "DEV", default: "", doc: "device to use (above)" },
    Flag { name: "NOOPT", default: "0", doc: "1: no kernel optimizations (plain loops)" },
    Flag {
        name: "BEAM",
        default: "0",
        doc: "n > 0: time candidate optimizations on the device, keep the best n, cache the winner on disk (a second run does no search)",
    },
    Flag { name: "BEAM_VERBOSE", default: "1", doc: "0: BEAM does not print the opts it chose" },
    Flag {
        name: "SPLIT_REDUCE",
        default: "32768",
        doc: "elements per output from which a reduce runs as two kernels: on GPU-style devices into 8–256 slices, on the CPU one slice per thread when there are fewer outputs than threads (0 never)",
    },
    Flag {
        name: "ALLREDUCE_RING",
        default: "65536",
        doc: "elements from which an allreduce across devices goes around a ring (reduce-scatter, then all-gather) instead of copying every shard to every device",
    },
    Flag {
        name: "FMA_CHAIN",
        default: "128",
        doc: "register-tile lanes from which unrolled dot products accumulate as one FMA chain (the `F0:n` opt overrides it per kernel)",
    },
    Flag { name: "JIT", default: "1", doc: "0 disables TinyJit capture" },
    Flag {
        name: "JIT_GRAPH",
        default: "1",
        doc: "0 replays TinyJit's kernels one by one through the engine instead of as device graphs (CPU: one pre-resolved launch list)",
    },
    Flag {
        name: "DIST_BACKEND",
        default: "tcp",
        doc: "what `distributed::Communicator::from_env` uses with MASTER_ADDR/MASTER_PORT: `tcp`, or `nccl` (feature `nccl`, NVIDIA GPUs)",
    },
    Flag {
        name: "DIST_TIMEOUT",
        default: "60",
        doc: "seconds a collective of `distributed::Communicator` waits for the other ranks before it fails naming them",
    },
    Flag {
        name: "VIZ",
        default: "",
        doc: "1: log the compiler (each kernel's AST, its form after every named pass with the rewrite rules that fired, opts, linear program, source; every launch with its time) and serve it as a web page on 127.0.0.1:`VIZ_PORT` when the program exits; json: write the log as JSON to `VIZ_OUT` after every realize instead",
    },
    Flag { name: "VIZ_OUT", default: "ferrograd-viz.json", doc: "where `VIZ=json` writes its log" },
    Flag { name: "VIZ_PORT", default: "8471", doc: "the port of `VIZ=1`'s page on 127.0.0.1 (0: any free port)" },
    Flag {
        name: "CC",
        default: "",
        doc: "C compiler command for the CPU device, read as a shell reads it (`ccache gcc`, `gcc-12 -std=c11`); default: clang, else cc",
    },
    Flag {
        name: "SANITIZE",
        default: "0",
        doc: "1: compile CPU kernels with `-fsanitize=undefined,address` (the ASan runtime must be preloaded: the fuzzer's `--sanitize` does it)",
    },
    Flag { name: "THREADS", default: "0", doc: "CPU threads for THREAD axes (0: one per core)" },
    Flag { name: "MNIST_DIR", default: "", doc: "where the MNIST files are" },
    Flag {
        name: "MINILM_DIR",
        default: "",
        doc: "where all-MiniLM-L6-v2 is (default `$FERROGRAD_CACHE/models/all-MiniLM-L6-v2`; `scripts/fetch_minilm.py` fills it)",
    },
    Flag {
        name: "FERROGRAD_CACHE",
        default: "",
        doc: "the kernel and self-test cache folder (default `$XDG_CACHE_HOME/ferrograd`, else `~/.cache/ferrograd`)",
    },
];

fn flag(name: &str) -> &'static Flag {
    FLAGS.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("flags: {name} is not in flags::FLAGS"))
}

/// The variable's text, or `None` when unset or blank.
pub fn text(name: &str) -> Option<String> {
    let f = flag(name);
    std::env::var(f.name).ok().filter(|v| !v.trim().is_empty())
}

/// The variable as an integer (its default when unset or not a number).
pub fn int(name: &str) -> i64 {
    let f = flag(name);
    let default = f.default.parse().unwrap_or(0);
    text(name).and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}
