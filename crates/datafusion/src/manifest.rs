//! UDF manifests: a JSON file listing graph files to register as UDFs, the unit a cluster's
//! scheduler and executors load at startup (each compiles the graph files itself).

use std::path::{Path, PathBuf};

use ragtime::CompileOptions;
use serde::Deserialize;

use crate::error::UdfError;
use crate::RagtimeUdf;

/// The `format` a manifest must declare.
pub const MANIFEST_FORMAT: &str = "ragtime-udfs/1";

/// A manifest file: `{"format": "ragtime-udfs/1", "udfs": [ ... ]}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    format: String,
    udfs: Vec<UdfEntry>,
}

/// One UDF of a manifest. `graph` is relative to the manifest's folder.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UdfEntry {
    name: String,
    graph: PathBuf,
    #[serde(default)]
    case: Option<String>,
    arguments: Vec<String>,
    #[serde(default)]
    output: usize,
}

/// Reads a UDF manifest and builds each UDF from its graph file
/// ([`RagtimeUdf::from_graph_file`]), compiled with `options`:
///
/// ```json
/// {"format": "ragtime-udfs/1", "udfs": [
///   {"name": "ragtime_softmax", "graph": "softmax.json", "arguments": ["x"]},
///   {"name": "bigram_embedding", "graph": "strings.json", "case": "seed_bigram_embedding",
///    "arguments": ["queries"], "output": 0}
/// ]}
/// ```
///
/// A manifest and its graph files are what a cluster needs to run ragtime UDFs: every node that
/// plans or executes queries loads the same manifest (see the guide's Ballista section).
pub fn load_manifest(path: &Path, options: impl Into<CompileOptions>) -> Result<Vec<RagtimeUdf>, UdfError> {
    let options = options.into();
    let bad = |reason: String| UdfError::Manifest { path: path.to_path_buf(), reason };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if manifest.format != MANIFEST_FORMAT {
        return Err(bad(format!("format is {:?}, expected {MANIFEST_FORMAT:?}", manifest.format)));
    }
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut udfs: Vec<RagtimeUdf> = Vec::with_capacity(manifest.udfs.len());
    for entry in manifest.udfs {
        if udfs.iter().any(|u| u.name() == entry.name) {
            return Err(bad(format!("UDF {:?} is listed twice", entry.name)));
        }
        let arguments: Vec<&str> = entry.arguments.iter().map(String::as_str).collect();
        let udf = RagtimeUdf::from_graph_file(
            entry.name,
            &folder.join(&entry.graph),
            entry.case.as_deref(),
            &arguments,
            options.clone(),
        )?
        .output(entry.output)?;
        udfs.push(udf);
    }
    Ok(udfs)
}
