//! A restricted unpickler for PyTorch checkpoints: it understands the opcodes of protocols 2–5
//! that `torch.save` writes, builds only plain values (None, bools, integers, floats, strings,
//! bytes, tuples, lists, dicts), storages (by persistent id) and tensor descriptions, and calls
//! nothing: a GLOBAL outside the short list of tensor-rebuilding and container names is an
//! error naming it. Objects live in an arena and the stack holds their indices, so a memoized
//! list or dict filled later is the same object wherever it is referenced.

use crate::uop::DType;

/// A value of the pickle.
#[derive(Clone, Debug)]
pub(crate) enum Obj {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Tuple(Vec<usize>),
    List(Vec<usize>),
    /// Keys and values in insertion order.
    Dict(Vec<(usize, usize)>),
    /// An allowed global: module and name.
    Global(String, String),
    /// A storage: the archive entry `data/<key>`, its element type and length.
    Storage {
        key: String,
        dtype: DType,
        numel: usize,
    },
    Tensor(TensorSpec),
}

/// A tensor as `_rebuild_tensor_v2` describes it: a strided view of a storage.
#[derive(Clone, Debug)]
pub(crate) struct TensorSpec {
    pub(crate) key: String,
    pub(crate) storage_numel: usize,
    pub(crate) offset: usize,
    pub(crate) size: Vec<usize>,
    pub(crate) stride: Vec<i64>,
}

/// The objects of a pickle and the index of its result.
pub(crate) struct Unpickled {
    pub(crate) arena: Vec<Obj>,
    pub(crate) root: usize,
}

/// The element type of a `torch.<Name>Storage` class.
fn storage_dtype(name: &str) -> Option<DType> {
    Some(match name {
        "FloatStorage" => DType::F32,
        "DoubleStorage" => DType::F64,
        "HalfStorage" => DType::F16,
        "BFloat16Storage" => DType::BF16,
        "LongStorage" => DType::I64,
        "IntStorage" => DType::I32,
        "ShortStorage" => DType::I16,
        "CharStorage" => DType::I8,
        "ByteStorage" => DType::U8,
        "BoolStorage" => DType::BOOL,
        "UInt16Storage" => DType::U16,
        "UInt32Storage" => DType::U32,
        "UInt64Storage" => DType::U64,
        _ => return None,
    })
}

/// Globals the unpickler may name: containers and tensor rebuilding (called by REDUCE) and
/// storage classes (named by persistent ids). Anything else is refused.
fn allowed(module: &str, name: &str) -> bool {
    matches!(
        (module, name),
        ("collections", "OrderedDict")
            | (
                "torch._utils",
                "_rebuild_tensor_v2" | "_rebuild_tensor" | "_rebuild_parameter" | "_rebuild_parameter_with_state"
            )
            | ("torch", "Size" | "device")
    ) || (module == "torch" && storage_dtype(name).is_some())
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    arena: Vec<Obj>,
    stack: Vec<usize>,
    marks: Vec<usize>,
    memo: std::collections::HashMap<u32, usize>,
}

type R<T> = std::result::Result<T, String>;

impl Machine<'_> {
    fn take(&mut self, n: usize) -> R<&[u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or_else(|| {
            format!("the pickle ends inside an opcode's argument at byte {} (wants {n} more bytes)", self.pos)
        })?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    fn le(&mut self, n: usize) -> R<u64> {
        let b = self.take(n)?;
        Ok(b.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64))
    }
    fn len(&mut self, n: usize) -> R<usize> {
        let v = self.le(n)?;
        usize::try_from(v)
            .ok()
            .filter(|&l| l <= self.data.len())
            .ok_or_else(|| format!("a length of {v} bytes in a pickle of {}", self.data.len()))
    }
    fn push(&mut self, o: Obj) {
        self.arena.push(o);
        self.stack.push(self.arena.len() - 1);
    }
    fn pop(&mut self) -> R<usize> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return Err(format!("stack underflow at byte {}", self.pos));
        }
        Ok(self.stack.pop().expect("checked above"))
    }
    fn pop_mark(&mut self) -> R<Vec<usize>> {
        let m = self.marks.pop().ok_or_else(|| format!("no MARK to pop at byte {}", self.pos))?;
        Ok(self.stack.split_off(m))
    }
    fn top(&self) -> R<usize> {
        let floor = self.marks.last().copied().unwrap_or(0);
        (self.stack.len() > floor)
            .then(|| self.stack[self.stack.len() - 1])
            .ok_or_else(|| format!("empty stack at byte {}", self.pos))
    }
    fn string(&mut self, n: usize) -> R<String> {
        let b = self.take(n)?.to_vec();
        String::from_utf8(b).map_err(|_| format!("a string that is not UTF-8 at byte {}", self.pos))
    }
    fn line(&mut self) -> R<String> {
        let rest = &self.data[self.pos..];
        let end = rest.iter().position(|&b| b == b'\n').ok_or("a GLOBAL without its newline")?;
        let s = String::from_utf8(rest[..end].to_vec()).map_err(|_| "a GLOBAL name that is not UTF-8")?;
        self.pos += end + 1;
        Ok(s)
    }
    fn global(&mut self, module: String, name: String) -> R<()> {
        if !allowed(&module, &name) {
            return Err(format!(
                "the pickle names `{module}.{name}`, which torch_load does not run: it reads only tensors, \
                 storages, dicts, lists, tuples, numbers and strings (a checkpoint with other objects needs \
                 to be saved as a state dict)"
            ));
        }
        self.push(Obj::Global(module, name));
        Ok(())
    }
    fn int(&self, i: usize, what: &str) -> R<i64> {
        match &self.arena[i] {
            Obj::Int(v) => Ok(*v),
            Obj::Bool(b) => Ok(*b as i64),
            o => Err(format!("{what}: expected an integer, found {}", kind(o))),
        }
    }
    fn ints(&self, i: usize, what: &str) -> R<Vec<i64>> {
        match &self.arena[i] {
            Obj::Tuple(items) | Obj::List(items) => items.iter().map(|&x| self.int(x, what)).collect(),
            o => Err(format!("{what}: expected a tuple of integers, found {}", kind(o))),
        }
    }
    fn items(&self, i: usize, what: &str) -> R<Vec<usize>> {
        match &self.arena[i] {
            Obj::Tuple(items) => Ok(items.clone()),
            o => Err(format!("{what}: expected a tuple of arguments, found {}", kind(o))),
        }
    }

    /// REDUCE: calls an allowed global on its arguments.
    fn call(&mut self, callable: usize, args: usize) -> R<Obj> {
        let Obj::Global(module, name) = self.arena[callable].clone() else {
            return Err(format!("REDUCE on {}, not a global", kind(&self.arena[callable])));
        };
        let a = self.items(args, &format!("{module}.{name}"))?;
        Ok(match (module.as_str(), name.as_str()) {
            ("collections", "OrderedDict") => Obj::Dict(Vec::new()),
            ("torch", "Size") => match a.first() {
                Some(&t) => self.arena[t].clone(),
                None => Obj::Tuple(Vec::new()),
            },
            ("torch", "device") => a.first().map_or(Obj::None, |&d| self.arena[d].clone()),
            ("torch._utils", "_rebuild_parameter" | "_rebuild_parameter_with_state") => {
                let &d = a.first().ok_or("_rebuild_parameter without its tensor")?;
                self.arena[d].clone()
            }
            ("torch._utils", "_rebuild_tensor_v2" | "_rebuild_tensor") => {
                if a.len() < 4 {
                    return Err(format!("{name} with {} arguments (it takes at least 4)", a.len()));
                }
                let Obj::Storage { key, numel, .. } = self.arena[a[0]].clone() else {
                    return Err(format!("{name}: its first argument is {}, not a storage", kind(&self.arena[a[0]])));
                };
                let offset = self.int(a[1], "storage offset")?;
                let size = self.ints(a[2], "size")?;
                let stride = self.ints(a[3], "stride")?;
                if offset < 0 || size.iter().any(|&s| s < 0) || size.len() != stride.len() {
                    return Err(format!(
                        "{name}: offset {offset}, size {size:?} and stride {stride:?} do not describe a tensor"
                    ));
                }
                Obj::Tensor(TensorSpec {
                    key,
                    storage_numel: numel,
                    offset: offset as usize,
                    size: size.iter().map(|&s| s as usize).collect(),
                    stride,
                })
            }
            _ => return Err(format!("`{module}.{name}` cannot be called")),
        })
    }

    /// BINPERSID: `('storage', torch.<T>Storage, key, location, numel)`; the legacy format adds
    /// a sixth item, a view's description, which must be None (views of storages are from
    /// PyTorch before 0.4).
    fn persistent(&mut self, pid: usize) -> R<Obj> {
        let items = self.items(pid, "persistent id")?;
        let is_storage = matches!(items.first().map(|&i| &self.arena[i]), Some(Obj::Str(s)) if s == "storage");
        let legacy_view = items.get(5).is_some_and(|&i| !matches!(self.arena[i], Obj::None));
        if !(items.len() == 5 || items.len() == 6) || !is_storage || legacy_view {
            return Err("a persistent id that is not ('storage', type, key, location, numel)".into());
        }
        let dtype = match &self.arena[items[1]] {
            Obj::Global(m, n) if m == "torch" => {
                storage_dtype(n).ok_or_else(|| format!("storage type torch.{n} is not one ferrograd holds"))?
            }
            o => return Err(format!("storage type {}", kind(o))),
        };
        let key = match &self.arena[items[2]] {
            Obj::Str(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => s.clone(),
            o => return Err(format!("storage key {}", kind(o))),
        };
        let numel = usize::try_from(self.int(items[4], "storage length")?).map_err(|_| "a negative storage length")?;
        Ok(Obj::Storage { key, dtype, numel })
    }

    fn run(&mut self) -> R<usize> {
        loop {
            let at = self.pos;
            let op = self.u8()?;
            match op {
                0x80 => {
                    let p = self.u8()?;
                    if p > 5 {
                        return Err(format!("pickle protocol {p} (ferrograd reads 2 to 5)"));
                    }
                }
                0x95 => {
                    self.take(8)?;
                }
                b'.' => return self.pop(),
                b'(' => self.marks.push(self.stack.len()),
                b')' => self.push(Obj::Tuple(Vec::new())),
                b'}' => self.push(Obj::Dict(Vec::new())),
                b']' => self.push(Obj::List(Vec::new())),
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Obj::Tuple(items));
                }
                b'l' => {
                    let items = self.pop_mark()?;
                    self.push(Obj::List(items));
                }
                b'd' => {
                    let items = self.pop_mark()?;
                    if items.len() % 2 != 0 {
                        return Err("DICT with an odd number of items".into());
                    }
                    self.push(Obj::Dict(items.chunks(2).map(|c| (c[0], c[1])).collect()));
                }
                0x85..=0x87 => {
                    let n = (op - 0x84) as usize;
                    let mut items = (0..n).map(|_| self.pop()).collect::<R<Vec<usize>>>()?;
                    items.reverse();
                    self.push(Obj::Tuple(items));
                }
                b'a' | b'e' => {
                    let items = if op == b'a' { vec![self.pop()?] } else { self.pop_mark()? };
                    let list = self.top()?;
                    match &mut self.arena[list] {
                        Obj::List(l) => l.extend(items),
                        o => return Err(format!("APPEND to {}", kind(o))),
                    }
                }
                b's' | b'u' => {
                    let items = if op == b's' {
                        let v = self.pop()?;
                        let k = self.pop()?;
                        vec![k, v]
                    } else {
                        self.pop_mark()?
                    };
                    if items.len() % 2 != 0 {
                        return Err("SETITEMS with an odd number of items".into());
                    }
                    let dict = self.top()?;
                    match &mut self.arena[dict] {
                        Obj::Dict(d) => d.extend(items.chunks(2).map(|c| (c[0], c[1]))),
                        o => return Err(format!("SETITEM on {}", kind(o))),
                    }
                }
                b'N' => self.push(Obj::None),
                0x88 => self.push(Obj::Bool(true)),
                0x89 => self.push(Obj::Bool(false)),
                b'J' => {
                    let v = self.le(4)? as u32 as i32 as i64;
                    self.push(Obj::Int(v));
                }
                b'K' => {
                    let v = self.u8()? as i64;
                    self.push(Obj::Int(v));
                }
                b'M' => {
                    let v = self.le(2)? as i64;
                    self.push(Obj::Int(v));
                }
                0x8a => {
                    let n = self.u8()? as usize;
                    if n > 8 {
                        return Err(format!("an integer of {n} bytes (more than 64 bits)"));
                    }
                    let b = self.take(n)?;
                    let mut v: i64 = b.iter().rev().fold(0i64, |a, &x| (a << 8) | x as i64);
                    if n > 0 && n < 8 && b[n - 1] & 0x80 != 0 {
                        v -= 1i64 << (8 * n);
                    }
                    self.push(Obj::Int(v));
                }
                b'G' => {
                    let b: [u8; 8] = self.take(8)?.try_into().expect("8 bytes");
                    self.push(Obj::Float(f64::from_be_bytes(b)));
                }
                b'X' | 0x8c | 0x8d => {
                    let n = self.len(match op {
                        b'X' => 4,
                        0x8c => 1,
                        _ => 8,
                    })?;
                    let s = self.string(n)?;
                    self.push(Obj::Str(s));
                }
                b'B' | b'C' | 0x8e => {
                    let n = self.len(match op {
                        b'B' => 4,
                        b'C' => 1,
                        _ => 8,
                    })?;
                    let b = self.take(n)?.to_vec();
                    self.push(Obj::Bytes(b));
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    self.global(module, name)?;
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (Obj::Str(m), Obj::Str(n)) = (self.arena[module].clone(), self.arena[name].clone()) else {
                        return Err("STACK_GLOBAL without two strings".into());
                    };
                    self.global(m, n)?;
                }
                b'q' | b'r' | 0x94 => {
                    let key = match op {
                        b'q' => self.u8()? as u32,
                        b'r' => self.le(4)? as u32,
                        _ => self.memo.len() as u32,
                    };
                    let top = self.top()?;
                    self.memo.insert(key, top);
                }
                b'h' | b'j' => {
                    let key = if op == b'h' { self.u8()? as u32 } else { self.le(4)? as u32 };
                    let &i = self.memo.get(&key).ok_or_else(|| format!("BINGET of memo {key}, never put"))?;
                    self.stack.push(i);
                }
                b'Q' => {
                    let pid = self.pop()?;
                    let s = self.persistent(pid)?;
                    self.push(s);
                }
                b'R' => {
                    let args = self.pop()?;
                    let callable = self.pop()?;
                    let o = self.call(callable, args)?;
                    self.push(o);
                }
                b'b' => {
                    // BUILD sets attributes (a state dict's `_metadata`): nothing to run.
                    self.pop()?;
                    self.top()?;
                }
                other => {
                    return Err(format!(
                        "opcode {other:#04x} at byte {at}, which torch_load does not read (it runs no code)"
                    ));
                }
            }
            if self.stack.len() > 1_000_000 || self.arena.len() > 50_000_000 {
                return Err("more than a million stack entries: not a checkpoint".into());
            }
        }
    }
}

pub(crate) fn kind(o: &Obj) -> &'static str {
    match o {
        Obj::None => "None",
        Obj::Bool(_) => "a bool",
        Obj::Int(_) => "an integer",
        Obj::Float(_) => "a float",
        Obj::Str(_) => "a string",
        Obj::Bytes(_) => "bytes",
        Obj::Tuple(_) => "a tuple",
        Obj::List(_) => "a list",
        Obj::Dict(_) => "a dict",
        Obj::Global(..) => "a global",
        Obj::Storage { .. } => "a storage",
        Obj::Tensor(_) => "a tensor",
    }
}

/// Runs the restricted unpickler over `data`.
pub(crate) fn unpickle(data: &[u8]) -> std::result::Result<Unpickled, String> {
    Ok(unpickle_prefix(data)?.0)
}

/// Runs the restricted unpickler over the pickle at the start of `data` and also returns its
/// length in bytes (where the next one starts, in a stream of pickles).
pub(crate) fn unpickle_prefix(data: &[u8]) -> std::result::Result<(Unpickled, usize), String> {
    let mut m =
        Machine { data, pos: 0, arena: Vec::new(), stack: Vec::new(), marks: Vec::new(), memo: Default::default() };
    let root = m.run()?;
    Ok((Unpickled { arena: m.arena, root }, m.pos))
}
