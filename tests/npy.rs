//! NumPy's `.npy`/`.npz`: files NumPy wrote (`scripts/npy_fixture.py`: every dtype, C and
//! Fortran order, big-endian, 0-d, empty, format 2.0, stored and deflated archives) read value
//! by value; files ferrograd writes are the committed fixtures `scripts/check_npy.py` reads with
//! NumPy; corrupt and lying files are an `Err`, never a panic.

mod common;
use ferrograd::nn::{npy_load, npy_save, npy_save_with, npz_load, npz_save};
use ferrograd::{DType, Tensor};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/npy").join(name)
}

/// The values `value()` in scripts/npy_fixture.py gives each dtype code, as f64.
fn expected(code: &str, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let i = i as f64;
            match code.as_bytes()[0] {
                b'b' => (i as usize).is_multiple_of(3) as u8 as f64,
                b'u' => i * 7.0,
                b'i' => i * 5.0 - 20.0,
                _ => i * 0.75 - 2.5,
            }
        })
        .collect()
}

fn values(t: &Tensor) -> Vec<f64> {
    t.cast(DType::F64).to_vec::<f64>().unwrap()
}

const CODES: [(&str, DType); 12] = [
    ("b1", DType::BOOL),
    ("i1", DType::I8),
    ("i2", DType::I16),
    ("i4", DType::I32),
    ("i8", DType::I64),
    ("u1", DType::U8),
    ("u2", DType::U16),
    ("u4", DType::U32),
    ("u8", DType::U64),
    ("f2", DType::F16),
    ("f4", DType::F32),
    ("f8", DType::F64),
];

#[test]
fn reads_what_numpy_wrote() {
    for (code, dtype) in CODES {
        let t = npy_load(fixture(&format!("c_{code}.npy"))).unwrap();
        assert_eq!((t.shape(), t.dtype()), (vec![3, 4], dtype), "{code}");
        assert_eq!(values(&t), expected(code, 12), "{code}");
    }
    let f = npy_load(fixture("fortran_f4.npy")).unwrap();
    assert_eq!(f.shape(), [3, 4]);
    assert_eq!(values(&f), expected("f4", 12), "Fortran order");
    let f3 = npy_load(fixture("fortran_f8_3d.npy")).unwrap();
    assert_eq!(f3.shape(), [2, 3, 4]);
    assert_eq!(values(&f3), expected("f8", 24), "Fortran order, 3-d");
    assert_eq!(values(&npy_load(fixture("big_i4.npy")).unwrap()), expected("i4", 12), "big-endian int32");
    assert_eq!(values(&npy_load(fixture("big_f8.npy")).unwrap()), expected("f8", 12), "big-endian float64");
    assert_eq!(values(&npy_load(fixture("v2_i2.npy")).unwrap()), expected("i2", 12), "format 2.0");
    let s = npy_load(fixture("scalar.npy")).unwrap();
    assert_eq!((s.shape(), values(&s)), (vec![], vec![3.5]));
    assert_eq!(npy_load(fixture("empty.npy")).unwrap().shape(), [0, 3]);
    for archive in ["arrays.npz", "compressed.npz"] {
        let d = npz_load(fixture(archive)).unwrap();
        assert_eq!(d.keys().collect::<Vec<_>>(), ["a", "b"], "{archive}");
        assert_eq!(values(&d["a"]), expected("f4", 12), "{archive}");
        assert_eq!((d["b"].dtype(), values(&d["b"])), (DType::I64, expected("i8", 12)), "{archive}");
    }
}

/// What ferrograd writes for scripts/check_npy.py: every dtype's `value()` in an `.npz`, a
/// transposed view, and a Fortran-order `.npy`.
fn ferrograd_arrays() -> BTreeMap<String, Tensor> {
    let mut d = BTreeMap::new();
    for (code, dtype) in CODES {
        d.insert(code.to_string(), Tensor::from_vec(expected(code, 12), [3, 4]).cast(dtype));
    }
    d.insert("transposed".into(), Tensor::from_vec(expected("f4", 12), [3, 4]).cast(DType::F32).t());
    d.insert("scalar".into(), Tensor::from_vec(vec![3.5f32], [0usize; 0]));
    d
}

#[test]
fn writes_what_numpy_reads() {
    let dir = std::env::temp_dir().join(format!("ferrograd-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let arrays = ferrograd_arrays();
    let (npz, fortran) = (dir.join("from_ferrograd.npz"), dir.join("from_ferrograd_fortran.npy"));
    npz_save(&npz, &arrays).unwrap();
    let f8 = Tensor::from_vec(expected("f8", 24), [2, 3, 4]);
    npy_save_with(&fortran, &f8, true).unwrap();
    // Read back by ferrograd.
    let back = npz_load(&npz).unwrap();
    for (name, t) in &arrays {
        assert_eq!((back[name].shape(), back[name].dtype()), (t.shape(), t.dtype()), "{name}");
        assert_eq!(values(&back[name]), values(t), "{name}");
    }
    assert_eq!(values(&npy_load(&fortran).unwrap()), expected("f8", 24));
    // The committed copies are what scripts/check_npy.py reads with NumPy.
    for (fresh, name) in [(&npz, "from_ferrograd.npz"), (&fortran, "from_ferrograd_fortran.npy")] {
        let bytes = std::fs::read(fresh).unwrap();
        if std::env::var_os("FERROGRAD_UPDATE_FIXTURES").is_some() {
            std::fs::write(fixture(name), &bytes).unwrap();
        }
        assert!(
            std::fs::read(fixture(name)).unwrap() == bytes,
            "ferrograd now writes {name} differently: FERROGRAD_UPDATE_FIXTURES=1 cargo test --test npy, then run scripts/check_npy.py"
        );
    }
    let single = dir.join("one.npy");
    npy_save(&single, &arrays["u2"]).unwrap();
    assert_eq!(values(&npy_load(&single).unwrap()), expected("u2", 12));
    assert!(npy_save(&single, &Tensor::ones([2]).cast(DType::BF16)).unwrap_err().to_string().contains("bfloat16"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_files_are_errors() {
    let dir = std::env::temp_dir().join(format!("ferrograd-npy-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read(fixture("c_f4.npy")).unwrap();
    let header_end = good.iter().position(|&b| b == b'\n').unwrap() + 1;
    let header = String::from_utf8(good[10..header_end].to_vec()).unwrap();
    let with_header = |h: &str| {
        let mut b = good[..8].to_vec();
        b.extend((h.len() as u16).to_le_bytes());
        b.extend(h.as_bytes());
        b.extend(&good[header_end..]);
        b
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() - 5].to_vec(), "truncated"),
        ("lying shape", with_header(&header.replace("(3, 4)", "(30, 4)")), "needs 480 bytes"),
        ("huge shape", with_header(&header.replace("(3, 4)", "(99999999999, 99999999999)")), "more than memory"),
        ("object array", with_header(&header.replace("<f4", "|O")), "not one ferrograd holds"),
        ("structured", with_header(&header.replace("'<f4'", "[('a', '<f4')]")), "unsupported value"),
        ("not npy", b"hello world, not an array".to_vec(), "magic"),
        ("short header", good[..20].to_vec(), "header claims"),
        ("version 9", [&good[..6], &[9u8, 0], &good[8..]].concat(), "format version 9.0"),
    ];
    for (what, bytes, needle) in cases {
        let p = dir.join(format!("{}.npy", what.replace(' ', "_")));
        std::fs::write(&p, &bytes).unwrap();
        let msg = npy_load(&p).expect_err(what).to_string();
        assert!(msg.contains(needle) && msg.contains(p.to_str().unwrap()), "{what}: {msg}");
    }
    let p = dir.join("not.npz");
    std::fs::write(&p, b"PK\x03\x04 not really a zip").unwrap();
    assert!(npz_load(&p).is_err());
    // Random corruption of real files: an Err or a value, never a panic.
    let npz = std::fs::read(fixture("compressed.npz")).unwrap();
    let mut rng = common::Rng::new(41);
    for round in 0..300 {
        let src = if round % 2 == 0 { &good } else { &npz };
        let b = rng.corrupt(src, 1 + round % 4, round % 7 == 0);
        let p = dir.join("fuzz.bin");
        std::fs::write(&p, &b).unwrap();
        let outcome = std::panic::catch_unwind(|| {
            let _ =
                if round % 2 == 0 { npy_load(&p).map(|t| t.to_bytes()) } else { npz_load(&p).map(|_| Ok(Vec::new())) };
        });
        assert!(outcome.is_ok(), "round {round}: a corrupt file panicked");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
