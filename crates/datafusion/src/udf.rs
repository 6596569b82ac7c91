//! `RagtimeUdf`: one output of a compiled `ragtime::Function` as a DataFusion scalar UDF.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility};
use ragtime::case::CaseFile;
use ragtime::{CompileOptions, Function, RaggedTensor, TensorType};
use ragtime_arrow::{FromArrow, OffsetWidth, ToArrow};

use crate::error::{CallError, UdfError};

/// Builds a DataFusion [`ScalarUDF`] that runs one output of a compiled [`Function`] on each
/// record batch.
///
/// The function's inputs are split in two: **arguments**, given in SQL as columns (one Arrow
/// array per batch, read with [`FromArrow`] without copying values), and **bound** inputs, fixed
/// values given once (an embedding table, a vocabulary). Each call converts the argument arrays,
/// calls the function on the batch (its rows are the batch's rows) and converts the chosen output
/// with [`ToArrow`]; the output must have one row per input row, and becomes a list column
/// (ragged output), a `FixedSizeList` column (uniform inner dims) or a primitive column (one value
/// per row, as a row mean).
///
/// Argument types are checked when a query is planned: `ragtime_softmax(ids)` on an integer
/// column is a plan error naming the UDF, the argument, its Arrow type and the input's type.
/// DataFusion scalar UDFs have one result, so a function with several outputs gives one UDF per
/// output ([`RagtimeUdf::output`]); each runs the whole function.
#[derive(Debug, Clone)]
pub struct RagtimeUdf {
    name: String,
    function: Arc<Function>,
    output: usize,
    arguments: Vec<usize>,
    bound: BTreeMap<usize, RaggedTensor>,
    from_arrow: FromArrow,
    to_arrow: ToArrow,
}

impl RagtimeUdf {
    /// A UDF called `name` for output 0 of `function`, every input an argument, in the
    /// function's input order.
    pub fn new(name: impl Into<String>, function: impl Into<Arc<Function>>) -> Self {
        let function = function.into();
        let arguments = (0..function.input_types().len()).collect();
        RagtimeUdf {
            name: name.into(),
            function,
            output: 0,
            arguments,
            bound: BTreeMap::new(),
            from_arrow: FromArrow::new(),
            // `List` / `Utf8`, DataFusion's own array and string types: its array functions take
            // them, and Ballista 55 turns `LargeList` results into `List` on the way between nodes.
            to_arrow: ToArrow::new().offsets(OffsetWidth::I32),
        }
    }

    /// A UDF called `name` for the function of a graph file (the `ragged-conformance/1` JSON that
    /// `ragtime run` reads; `case` picks one case of a file that holds several). The function is
    /// compiled for any number of rows; `arguments` names the inputs given in SQL, in order, and
    /// every other input is bound to its value in the file, so a graph file ships a function
    /// together with its tables. The UDF computes the file's first output.
    pub fn from_graph_file(
        name: impl Into<String>,
        path: &Path,
        case: Option<&str>,
        arguments: &[&str],
        options: impl Into<CompileOptions>,
    ) -> Result<Self, UdfError> {
        let name = name.into();
        let file = CaseFile::load(path).map_err(|source| UdfError::GraphFile {
            udf: name.clone(),
            path: path.to_path_buf(),
            source: Box::new(source),
        })?;
        let cases = file.cases;
        let chosen = match case {
            Some(wanted) => cases.iter().find(|c| ragtime::case::case_name_matches(&c.name, wanted)),
            None if cases.len() == 1 => cases.first(),
            None => None,
        };
        let Some(chosen) = chosen else {
            return Err(UdfError::Case {
                udf: name,
                path: path.to_path_buf(),
                wanted: case.map(str::to_string),
                cases: cases.iter().map(|c| c.name.clone()).collect(),
            });
        };
        let built = chosen.build_any_rows(options).map_err(|source| UdfError::GraphFile {
            udf: name.clone(),
            path: path.to_path_buf(),
            source: Box::new(source),
        })?;
        let mut udf = RagtimeUdf::new(name, built.function).arguments(arguments)?;
        for (k, value) in built.inputs.into_iter().enumerate() {
            if !udf.arguments.contains(&k) {
                udf.bound.insert(k, value);
            }
        }
        Ok(udf)
    }

    /// The inputs given in SQL, by name, in call order; the others must be [bound](Self::bind).
    pub fn arguments(mut self, names: &[&str]) -> Result<Self, UdfError> {
        let mut arguments = Vec::with_capacity(names.len());
        for &name in names {
            let k = self.input_index(name)?;
            if arguments.contains(&k) {
                return Err(UdfError::Input {
                    udf: self.name,
                    input: name.to_string(),
                    reason: "is listed twice".into(),
                });
            }
            arguments.push(k);
        }
        self.bound.retain(|k, _| !arguments.contains(k));
        self.arguments = arguments;
        Ok(self)
    }

    /// Fixes input `name` to `value` for every call (it is no longer an argument). The value is
    /// checked against the input's type now, and shared, not copied, by every call.
    pub fn bind(mut self, name: &str, value: RaggedTensor) -> Result<Self, UdfError> {
        let k = self.input_index(name)?;
        let ty = &self.function.input_types()[k];
        if !ty.admits(&value) {
            return Err(UdfError::Input {
                udf: self.name,
                input: name.to_string(),
                reason: format!("takes {ty}, but the bound value is {}", TensorType::of(&value)),
            });
        }
        self.arguments.retain(|&a| a != k);
        self.bound.insert(k, value);
        Ok(self)
    }

    /// Computes the function's output `k` (counting from 0) instead of output 0.
    pub fn output(mut self, k: usize) -> Result<Self, UdfError> {
        let outputs = self.function.num_outputs();
        if k >= outputs {
            return Err(UdfError::Output {
                udf: self.name,
                reason: format!("output {k} does not exist: the function has {outputs}"),
            });
        }
        self.output = k;
        Ok(self)
    }

    /// The null policies for argument columns (by default a null list or value is an error
    /// naming the UDF, the argument and the row).
    pub fn nulls(mut self, from_arrow: FromArrow) -> Self {
        self.from_arrow = from_arrow;
        self
    }

    /// How the output is written as Arrow. By default `List` levels and `Utf8` strings: values
    /// and string bytes are shared, and offsets are narrowed to i32 (one copy of 4 bytes per row;
    /// a column past `i32::MAX` values is an error). `ToArrow::new()` gives `LargeList` /
    /// `LargeUtf8`, which share ragtime's offsets too.
    pub fn to_arrow(mut self, to_arrow: ToArrow) -> Self {
        self.to_arrow = to_arrow;
        self
    }

    /// The UDF's SQL name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Arrow type of the UDF's result column.
    pub fn return_type(&self) -> Result<DataType, UdfError> {
        let ty = &self.function.output_types()[self.output];
        self.to_arrow
            .column_type(ty)
            .map_err(|e| UdfError::Output { udf: self.name.clone(), reason: format!("output of type {ty}: {e}") })
    }

    /// Checks that every input is an argument or bound and that the output has an Arrow column
    /// type, then wraps the UDF for DataFusion (`SessionContext::register_udf`).
    pub fn build(self) -> Result<ScalarUDF, UdfError> {
        let names = self.function.input_names();
        if let Some(k) = (0..names.len()).find(|k| !self.arguments.contains(k) && !self.bound.contains_key(k)) {
            return Err(UdfError::Input {
                udf: self.name,
                input: names[k].clone(),
                reason: "is neither an argument nor bound to a value".into(),
            });
        }
        let return_type = self.return_type()?;
        let signature = Signature::user_defined(Volatility::Immutable);
        Ok(ScalarUDF::new_from_impl(UdfImpl { udf: self, signature, return_type }))
    }

    /// Runs the function on `arguments` (in argument order) with the bound inputs, as each
    /// batch of a query does, and returns the UDF's output: the UDF without DataFusion.
    pub fn call(&self, arguments: &[RaggedTensor]) -> ragtime::Result<RaggedTensor> {
        if arguments.len() != self.arguments.len() {
            return Err(ragtime::Error::argument(
                "datafusion_udf",
                format!("{} takes {} argument(s), got {}", self.name, self.arguments.len(), arguments.len()),
            ));
        }
        let mut inputs = self.bound_inputs();
        for (&k, value) in self.arguments.iter().zip(arguments) {
            inputs[k] = Some(value.clone());
        }
        self.call_inputs(inputs)
    }

    /// One slot per function input, the bound ones filled.
    fn bound_inputs(&self) -> Vec<Option<RaggedTensor>> {
        let mut inputs = vec![None; self.function.input_types().len()];
        for (k, value) in &self.bound {
            inputs[*k] = Some(value.clone());
        }
        inputs
    }

    /// Calls the function on a full set of inputs (every argument given; `build` checked that
    /// the rest are bound) and keeps the chosen output.
    fn call_inputs(&self, inputs: Vec<Option<RaggedTensor>>) -> ragtime::Result<RaggedTensor> {
        let names = self.function.input_names();
        let inputs = inputs
            .into_iter()
            .enumerate()
            .map(|(k, value)| {
                value.ok_or_else(|| {
                    ragtime::Error::argument(
                        "datafusion_udf",
                        format!("{}: input {:?} is neither an argument nor bound to a value", self.name, names[k]),
                    )
                })
            })
            .collect::<ragtime::Result<Vec<_>>>()?;
        let mut outputs = self.function.call(&inputs)?;
        let output = outputs.swap_remove(self.output);
        self.function.recycle(outputs);
        Ok(output)
    }

    fn input_index(&self, name: &str) -> Result<usize, UdfError> {
        let names = self.function.input_names();
        names.iter().position(|n| n == name).ok_or_else(|| UdfError::Input {
            udf: self.name.clone(),
            input: name.to_string(),
            reason: format!("is not an input of the function (its inputs: {})", names.join(", ")),
        })
    }
}

/// The DataFusion side of a [`RagtimeUdf`].
#[derive(Debug)]
struct UdfImpl {
    udf: RagtimeUdf,
    signature: Signature,
    return_type: DataType,
}

/// Two UDFs are the same when they run the same compiled function (by identity) the same way.
impl PartialEq for UdfImpl {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (&self.udf, &other.udf);
        a.name == b.name
            && Arc::ptr_eq(&a.function, &b.function)
            && a.output == b.output
            && a.arguments == b.arguments
            && a.bound.keys().eq(b.bound.keys())
            && self.return_type == other.return_type
    }
}

impl Eq for UdfImpl {}

impl Hash for UdfImpl {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.udf.name.hash(state);
        Arc::as_ptr(&self.udf.function).hash(state);
        self.udf.output.hash(state);
    }
}

impl UdfImpl {
    /// The function input an argument feeds, by name.
    fn argument_name(&self, position: usize) -> &str {
        &self.udf.function.input_names()[self.udf.arguments[position]]
    }
}

impl ScalarUDFImpl for UdfImpl {
    fn name(&self) -> &str {
        &self.udf.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    /// The planning-time check of the argument count and types: each argument type must read
    /// ([`FromArrow::column_type`]) as a type the function input takes. Types are never
    /// coerced: a list of float64 given to a float32 input is refused, not converted.
    fn coerce_types(&self, arg_types: &[DataType]) -> DfResult<Vec<DataType>> {
        let udf = &self.udf;
        if arg_types.len() != udf.arguments.len() {
            let names: Vec<&str> = (0..udf.arguments.len()).map(|k| self.argument_name(k)).collect();
            return Err(DataFusionError::Plan(format!(
                "{}: takes {} argument(s) ({}), got {}",
                udf.name,
                udf.arguments.len(),
                names.join(", "),
                arg_types.len()
            )));
        }
        for (position, data_type) in arg_types.iter().enumerate() {
            let input = self.argument_name(position);
            let expected = &udf.function.input_types()[udf.arguments[position]];
            let found = udf.from_arrow.column_type(input, data_type).map_err(|e| {
                DataFusionError::Plan(format!("{}: argument {position} ({input}) of type {data_type}: {e}", udf.name))
            })?;
            if !ragtime_arrow::input_takes(expected, &found) {
                return Err(DataFusionError::Plan(format!(
                    "{}: argument {position} ({input}) of type {data_type} reads as {found}, but the input takes {expected}",
                    udf.name
                )));
            }
        }
        Ok(arg_types.to_vec())
    }

    fn return_type(&self, _arg_types: &[DataType]) -> DfResult<DataType> {
        Ok(self.return_type.clone())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let udf = &self.udf;
        let rows = args.number_rows;
        let call_error = |argument: Option<String>, source: ragtime::Error| {
            DataFusionError::External(Box::new(CallError { udf: udf.name.clone(), argument, source }))
        };
        let mut inputs = udf.bound_inputs();
        for (position, arg) in args.args.into_iter().enumerate() {
            let input = self.argument_name(position);
            // A literal argument is repeated once per row, as DataFusion's own functions do.
            let array: ArrayRef = arg.into_array(rows)?;
            let value = udf
                .from_arrow
                .convert(input, array)
                .map_err(|e| call_error(Some(format!("argument {position} ({input})")), e))?;
            inputs[udf.arguments[position]] = Some(value);
        }
        let output = udf.call_inputs(inputs).map_err(|e| call_error(None, e))?;
        if output.flat_values().shape().is_empty() || output.nrows() != rows {
            let shape = output.flat_values().shape().to_vec();
            return Err(call_error(
                None,
                ragtime::Error::argument(
                    "datafusion_udf",
                    format!(
                        "output {} has {} row(s) (flat shape {shape:?}) for a batch of {rows}: a scalar UDF needs one row per input row",
                        udf.output,
                        if shape.is_empty() { 0 } else { output.nrows() },
                    ),
                ),
            ));
        }
        let array = udf.to_arrow.convert(&output).map_err(|e| call_error(None, e))?;
        // A partition the type calls ragged may be uniform at run time (a `FixedSizeList`);
        // the column keeps the planned type (its offsets are computed, the values shared).
        let array = if array.data_type() == &self.return_type { array } else { cast(&array, &self.return_type)? };
        Ok(ColumnarValue::Array(array))
    }
}
