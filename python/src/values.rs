//! From a package's bytes to Python: one value at a time (a dict, a getter's value), or a
//! column per field for numpy. Every value is decoded by rtde-core's [`Value`] codec.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rtde_core::fields::WireType;
use rtde_core::{DynamicRecipe, Value};

use crate::enums;

/// Where one field's value sits in a package, and how Python sees it.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) name: &'static str,
    wire: WireType,
    offset: usize,
    /// The enum its codes are members of (`robot_mode`: `RobotMode`).
    class: Option<Py<PyAny>>,
}

impl Slot {
    /// The field's value in `payload` (a package of the recipe the slot was made for).
    pub(crate) fn value(&self, payload: &[u8]) -> Value {
        let mut value = Value::zero(self.wire);
        // A payload of the recipe's size holds every slot; a shorter one leaves zero,
        // which the driver never hands out (it checks the size of every package).
        let _ = payload
            .get(self.offset..)
            .is_some_and(|bytes| value.read_be(self.wire, bytes));
        value
    }

    /// The value as Python sees it (see [`to_py`]), with the field's enum.
    pub(crate) fn to_py<'py>(&self, py: Python<'py>, value: Value) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, value, self.class.as_ref())
    }
}

/// A value of no particular field as Python sees it.
pub(crate) fn plain(py: Python<'_>, value: Value) -> PyResult<Bound<'_, PyAny>> {
    to_py(py, value, None)
}

/// A value as Python sees it: a float, an int (a member of `class` where given), a bool,
/// or a list of six (or three).
fn to_py<'py>(
    py: Python<'py>,
    value: Value,
    class: Option<&Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let code = |code: i64| -> PyResult<Bound<'py, PyAny>> {
        match class {
            Some(class) => enums::member(py, class, code),
            None => Ok(code.into_pyobject(py)?.into_any()),
        }
    };
    Ok(match value {
        Value::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Value::Uint8(v) => code(i64::from(v))?,
        Value::Uint32(v) => code(i64::from(v))?,
        Value::Int32(v) => code(i64::from(v))?,
        Value::Uint64(v) => v.into_pyobject(py)?.into_any(),
        Value::Double(v) => v.into_pyobject(py)?.into_any(),
        Value::Vector3d(v) => PyList::new(py, v)?.into_any(),
        Value::Vector6d(v) => PyList::new(py, v)?.into_any(),
        Value::Vector6Int32(v) => {
            let items = v
                .iter()
                .map(|c| code(i64::from(*c)))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Vector6Uint32(v) => PyList::new(py, v)?.into_any(),
    })
}

/// The slots of a recipe, in its order.
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) slots: Vec<Slot>,
}

impl Layout {
    pub(crate) fn new(py: Python<'_>, recipe: &DynamicRecipe) -> Layout {
        let spec = rtde_core::Recipe::spec(recipe);
        let slots = recipe
            .fields()
            .iter()
            .map(|f| Slot {
                name: f.name(),
                wire: f.wire_type(),
                offset: spec.offset_of(f.name()).unwrap_or(0),
                class: enums::class_for_field(py, f.name()),
            })
            .collect();
        Layout { slots }
    }

    /// The position of a field, by its canonical name or ignoring case.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.name == name).or_else(|| {
            self.slots
                .iter()
                .position(|s| s.name.eq_ignore_ascii_case(name))
        })
    }

    /// A package as a dict of field name to value.
    pub(crate) fn to_dict<'py>(
        &self,
        py: Python<'py>,
        payload: &[u8],
    ) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for slot in &self.slots {
            dict.set_item(slot.name, slot.to_py(py, slot.value(payload))?)?;
        }
        Ok(dict)
    }

    /// Empty columns, one per field, with room for `rows`.
    pub(crate) fn columns(&self, rows: usize) -> Vec<Column> {
        self.slots
            .iter()
            .map(|s| Column::new(s.wire, rows))
            .collect()
    }

    /// Appends a package to the columns.
    pub(crate) fn push(&self, columns: &mut [Column], payload: &[u8]) {
        for (slot, column) in self.slots.iter().zip(columns) {
            column.push(slot.value(payload));
        }
    }

    /// The columns as a dict of numpy arrays: one row per package, vectors as `(n, 6)`.
    pub(crate) fn to_arrays<'py>(
        &self,
        py: Python<'py>,
        columns: Vec<Column>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (slot, column) in self.slots.iter().zip(columns) {
            dict.set_item(slot.name, column.into_array(py)?)?;
        }
        Ok(dict)
    }
}

/// One field's values over many packages, in the numpy dtype of its wire type.
#[derive(Debug)]
pub(crate) enum Column {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    U32(Vec<u32>, usize),
    U64(Vec<u64>),
    I32(Vec<i32>, usize),
    F64(Vec<f64>, usize),
}

impl Column {
    fn new(wire: WireType, rows: usize) -> Column {
        let width = match wire {
            WireType::Vector3d => 3,
            WireType::Vector6d | WireType::Vector6Int32 | WireType::Vector6Uint32 => 6,
            _ => 1,
        };
        let cap = rows.saturating_mul(width);
        match wire {
            WireType::Bool => Column::Bool(Vec::with_capacity(cap)),
            WireType::Uint8 => Column::U8(Vec::with_capacity(cap)),
            WireType::Uint32 | WireType::Vector6Uint32 => {
                Column::U32(Vec::with_capacity(cap), width)
            }
            WireType::Uint64 => Column::U64(Vec::with_capacity(cap)),
            WireType::Int32 | WireType::Vector6Int32 => Column::I32(Vec::with_capacity(cap), width),
            WireType::Double | WireType::Vector3d | WireType::Vector6d => {
                Column::F64(Vec::with_capacity(cap), width)
            }
        }
    }

    fn push(&mut self, value: Value) {
        match (self, value) {
            (Column::Bool(c), Value::Bool(v)) => c.push(v),
            (Column::U8(c), Value::Uint8(v)) => c.push(v),
            (Column::U32(c, _), Value::Uint32(v)) => c.push(v),
            (Column::U32(c, _), Value::Vector6Uint32(v)) => c.extend_from_slice(&v),
            (Column::U64(c), Value::Uint64(v)) => c.push(v),
            (Column::I32(c, _), Value::Int32(v)) => c.push(v),
            (Column::I32(c, _), Value::Vector6Int32(v)) => c.extend_from_slice(&v),
            (Column::F64(c, _), Value::Double(v)) => c.push(v),
            (Column::F64(c, _), Value::Vector3d(v)) => c.extend_from_slice(&v),
            (Column::F64(c, _), Value::Vector6d(v)) => c.extend_from_slice(&v),
            // A column is made from the slot's own wire type, and the slot decodes only it.
            _ => {}
        }
    }

    fn into_array(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        fn shaped<T: numpy::Element>(
            py: Python<'_>,
            v: Vec<T>,
            width: usize,
        ) -> PyResult<Bound<'_, PyAny>> {
            if width == 1 {
                return Ok(PyArray1::from_vec(py, v).into_any());
            }
            let rows = v.len() / width;
            let array = Array2::from_shape_vec((rows, width), v)
                .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
            Ok(array.into_pyarray(py).into_any())
        }
        match self {
            Column::Bool(v) => shaped(py, v, 1),
            Column::U8(v) => shaped(py, v, 1),
            Column::U32(v, w) => shaped(py, v, w),
            Column::U64(v) => shaped(py, v, 1),
            Column::I32(v, w) => shaped(py, v, w),
            Column::F64(v, w) => shaped(py, v, w),
        }
    }
}
