//! A loaded model and the interpreter of its graph: values by name in nested scopes (a
//! subgraph of `If`/`Loop` sees its parents' values), nodes run in order.

use super::node::Node;
use super::ops;
use super::proto::{GraphProto, ModelProto};
use super::value::tensor_from_proto;
use crate::error::{Error, Result};
use crate::tensor::{default_device, Tensor};
use prost::Message;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// An ONNX model ready to run: its graph, its weights as tensors on the default device, and the
/// opset versions it imports.
pub struct OnnxModel {
    path: PathBuf,
    graph: GraphProto,
    initializers: HashMap<String, Tensor>,
    opsets: BTreeMap<String, i64>,
    device: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

impl std::fmt::Debug for OnnxModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxModel")
            .field("path", &self.path)
            .field("nodes", &self.graph.node.len())
            .field("opsets", &self.opsets)
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish()
    }
}

/// The domain a node or opset names: "" and "ai.onnx" are the same, the standard operators.
fn domain_key(d: Option<&str>) -> String {
    match d.unwrap_or("") {
        "" | "ai.onnx" => String::new(),
        d => d.to_string(),
    }
}

impl OnnxModel {
    /// Reads the `.onnx` file at `path` (external data files beside it).
    pub fn load(path: impl AsRef<Path>) -> Result<OnnxModel> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(Error::file(path))?;
        OnnxModel::from_bytes(&bytes, path)
    }

    /// A model from the bytes of a `.onnx` file; `path` names it in messages and locates
    /// external data.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<OnnxModel> {
        let model = ModelProto::decode(bytes)
            .map_err(|e| Error::format(path, format!("not an ONNX model (protobuf decoding failed: {e})")))?;
        let graph = model.graph.ok_or_else(|| Error::format(path, "the model has no graph"))?;
        let mut opsets = BTreeMap::new();
        for o in &model.opset_import {
            opsets.insert(domain_key(o.domain.as_deref()), o.version.unwrap_or(1));
        }
        // IR version 3 and older imported no opset: the default domain at version 1.
        opsets.entry(String::new()).or_insert(1);
        let device = default_device();
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut initializers = HashMap::new();
        for t in &graph.initializer {
            let name = t.name.clone().unwrap_or_default();
            initializers.insert(name, tensor_from_proto(t, path, dir, &device)?);
        }
        if let Some(s) = graph.sparse_initializer.first() {
            let name = s.values.as_ref().and_then(|v| v.name.clone()).unwrap_or_default();
            return Err(Error::Unsupported(format!("{}: sparse initializer {name:?}", path.display())));
        }
        let kinds =
            graph.input.iter().chain(&graph.output).filter_map(|v| Some((v.name.as_deref()?, v.r#type.as_ref()?)));
        for (name, ty) in kinds {
            if ty.sequence_type.is_some() || ty.optional_type.is_some() {
                return Err(Error::Unsupported(format!(
                    "{}: graph value {name:?} is a sequence or optional, which ferrograd's ONNX runner does not hold",
                    path.display()
                )));
            }
        }
        let name = |v: &super::proto::ValueInfoProto| v.name.clone().unwrap_or_default();
        let inputs = graph.input.iter().map(name).filter(|n| !initializers.contains_key(n)).collect();
        let outputs = graph.output.iter().map(name).collect();
        Ok(OnnxModel { path: path.to_path_buf(), graph, initializers, opsets, device, inputs, outputs })
    }

    /// The graph inputs a caller gives (those without an initializer), in order.
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    /// The graph outputs, in order.
    pub fn outputs(&self) -> &[String] {
        &self.outputs
    }

    /// The version of the standard operator set the model imports.
    pub fn opset(&self) -> i64 {
        self.opsets[""]
    }

    /// Runs the graph on `inputs` (by name) and returns every graph output by name, as lazy
    /// tensors. Inputs with an initializer may be given to override it.
    pub fn run<S: AsRef<str>>(
        &self,
        inputs: impl IntoIterator<Item = (S, Tensor)>,
    ) -> Result<BTreeMap<String, Tensor>> {
        let mut scope = Scope { values: HashMap::new(), parent: None };
        for (name, t) in inputs {
            scope.values.insert(name.as_ref().to_string(), t);
        }
        if let Some(missing) = self.inputs.iter().find(|n| !scope.values.contains_key(*n)) {
            return Err(Error::Other(format!(
                "{}: input {missing:?} was not given (the model's inputs: {:?})",
                self.path.display(),
                self.inputs
            )));
        }
        for (name, t) in &self.initializers {
            scope.values.entry(name.clone()).or_insert_with(|| t.clone());
        }
        let outs = self.run_graph(&self.graph, scope)?;
        Ok(self.outputs.iter().cloned().zip(outs).collect())
    }

    /// Runs `graph` in `scope` and returns its outputs in order.
    pub(crate) fn run_graph(&self, graph: &GraphProto, mut scope: Scope<'_>) -> Result<Vec<Tensor>> {
        for t in &graph.initializer {
            if !scope.values.contains_key(t.name.as_deref().unwrap_or("")) {
                let dir = self.path.parent().unwrap_or(Path::new("."));
                scope
                    .values
                    .insert(t.name.clone().unwrap_or_default(), tensor_from_proto(t, &self.path, dir, &self.device)?);
            }
        }
        for proto in &graph.node {
            let domain = domain_key(proto.domain.as_deref());
            let op = proto.op_type.as_deref().unwrap_or("");
            let opset = *self.opsets.get(&domain).ok_or_else(|| {
                Error::Unsupported(format!(
                    "{}: op {op} of domain {domain:?}, which the model does not import",
                    self.path.display()
                ))
            })?;
            let mut inputs = Vec::with_capacity(proto.input.len());
            for name in &proto.input {
                if name.is_empty() {
                    inputs.push(None);
                } else {
                    let t = scope.get(name).ok_or_else(|| {
                        Error::format(
                            &self.path,
                            format!("node {op} reads {name:?}, which no earlier node or input defines"),
                        )
                    })?;
                    inputs.push(Some(t.clone()));
                }
            }
            let node = Node { proto, inputs, opset, origin: &self.path, device: &self.device };
            let outs = if !domain.is_empty() {
                Err(node.unsupported(format!("domain {domain:?}")))
            } else {
                self.run_node(&node, &scope)
            }?;
            for (name, t) in proto.output.iter().zip(outs) {
                if let (false, Some(t)) = (name.is_empty(), t) {
                    scope.values.insert(name.clone(), t);
                }
            }
        }
        let mut outs = Vec::with_capacity(graph.output.len());
        for o in &graph.output {
            let name = o.name.as_deref().unwrap_or("");
            let t = scope
                .get(name)
                .ok_or_else(|| Error::format(&self.path, format!("graph output {name:?} is never computed")))?;
            outs.push(t.clone());
        }
        Ok(outs)
    }

    /// One node: control flow here (it runs subgraphs), every other op in `ops`. A panic in a
    /// tensor op (shapes that do not fit) becomes an `Err` naming the node.
    fn run_node(&self, node: &Node<'_>, scope: &Scope<'_>) -> Result<Vec<Option<Tensor>>> {
        let run = || -> Result<Vec<Option<Tensor>>> {
            match node.op() {
                "If" => self.run_if(node, scope),
                "Loop" => self.run_loop(node, scope),
                "Scan" => self.run_scan(node, scope),
                _ => ops::run(node),
            }
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
            Ok(r) => r,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "a panic".into());
                Err(node.error(msg))
            }
        }
    }
}

/// The values visible to a graph: its own, then its parents'.
pub(crate) struct Scope<'p> {
    values: HashMap<String, Tensor>,
    parent: Option<&'p Scope<'p>>,
}

impl<'p> Scope<'p> {
    /// An empty scope inside `parent`.
    pub(crate) fn child(parent: &'p Scope<'p>) -> Scope<'p> {
        Scope { values: HashMap::new(), parent: Some(parent) }
    }

    pub(crate) fn set(&mut self, name: String, t: Tensor) {
        self.values.insert(name, t);
    }

    fn get(&self, name: &str) -> Option<&Tensor> {
        self.values.get(name).or_else(|| self.parent.and_then(|p| p.get(name)))
    }
}
