//! One batch column made into the column a data file stores: the same values in the table's
//! Arrow type, nested fields matched by name and carrying their Parquet field ids, missing
//! nullable fields filled with nulls, and values cast only where no value changes (a value that
//! does not fit the table's type is an error, not a null).
//!
//! Written here rather than with `arrow_cast::cast` alone: `cast` matches struct fields only
//! when both sides have the same fields, cannot fill a missing nullable field, and by default
//! turns a value that does not fit into a null.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, StructArray, new_null_array};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType as ArrowType, Field, FieldRef, Fields};

use crate::error::{Error, Result};

/// `array` (column or field `path` of a batch) as an array of type `target`.
pub(crate) fn conform(array: &ArrayRef, target: &ArrowType, path: &str) -> Result<ArrayRef> {
    if array.data_type() == target {
        return Ok(array.clone());
    }
    match target {
        ArrowType::Struct(fields) => conform_struct(array, fields, path),
        ArrowType::List(element) => conform_list(array, element, path),
        ArrowType::Map(entries, sorted) => conform_map(array, entries, *sorted, path),
        _ => cast_leaf(array, target, path),
    }
}

/// Casts a primitive value array; fails (instead of writing nulls) on a value that does not
/// fit.
fn cast_leaf(array: &ArrayRef, target: &ArrowType, path: &str) -> Result<ArrayRef> {
    if matches!(
        array.data_type(),
        ArrowType::Struct(_) | ArrowType::List(_) | ArrowType::LargeList(_) | ArrowType::Map(..)
    ) {
        return Err(mismatch(path, array.data_type(), target));
    }
    let options = CastOptions {
        safe: false,
        ..CastOptions::default()
    };
    cast_with_options(array, target, &options).map_err(|e| Error::InvalidColumnData {
        column: path.to_string(),
        reason: format!("cannot convert {} to {target}: {e}", array.data_type()),
    })
}

fn mismatch(path: &str, found: &ArrowType, target: &ArrowType) -> Error {
    Error::InvalidColumnData {
        column: path.to_string(),
        reason: format!(
            "the batch has {found} where the table stores {target}; give the column the \
             table's shape (same nested fields, by name)"
        ),
    }
}

/// Fails when a required field has a null where its parent has a value.
fn check_required(
    field: &Field,
    values: &dyn Array,
    parent: Option<&NullBuffer>,
    path: &str,
) -> Result<()> {
    if field.is_nullable() {
        return Ok(());
    }
    let Some(nulls) = values.logical_nulls() else {
        return Ok(());
    };
    let unmasked = (0..values.len())
        .filter(|&i| nulls.is_null(i) && parent.is_none_or(|p| p.is_valid(i)))
        .count();
    if unmasked > 0 {
        return Err(Error::InvalidColumnData {
            column: path.to_string(),
            reason: format!(
                "the field is required (NOT NULL) but the batch has {unmasked} nulls in it"
            ),
        });
    }
    Ok(())
}

fn conform_struct(array: &ArrayRef, fields: &Fields, path: &str) -> Result<ArrayRef> {
    let Some(source) = array.as_struct_opt() else {
        return Err(mismatch(
            path,
            array.data_type(),
            &ArrowType::Struct(fields.clone()),
        ));
    };
    let ArrowType::Struct(source_fields) = source.data_type() else {
        unreachable!("a struct array has a struct type");
    };
    if let Some(extra) = source_fields
        .iter()
        .find(|s| !fields.iter().any(|f| f.name() == s.name()))
    {
        let names: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
        return Err(Error::InvalidColumnData {
            column: path.to_string(),
            reason: format!(
                "the batch has a field {:?} that the table's struct does not (its fields are {}); \
                 drop it, or add it to the table first",
                extra.name(),
                names.join(", ")
            ),
        });
    }
    let mut children = Vec::with_capacity(fields.len());
    for f in fields {
        let child_path = format!("{path}.{}", f.name());
        let child = match source_fields.iter().position(|s| s.name() == f.name()) {
            Some(i) => conform(source.column(i), f.data_type(), &child_path)?,
            None if f.is_nullable() => new_null_array(f.data_type(), source.len()),
            None => {
                return Err(Error::InvalidColumnData {
                    column: child_path,
                    reason: "the field is required (NOT NULL) but missing from the batch".into(),
                });
            }
        };
        check_required(f, child.as_ref(), source.nulls(), &child_path)?;
        children.push(child);
    }
    Ok(Arc::new(StructArray::try_new(
        fields.clone(),
        children,
        source.nulls().cloned(),
    )?))
}

/// The list as a `ListArray` of its own element type (large lists, fixed-size lists and list
/// views are cast first).
fn as_list(array: &ArrayRef, path: &str, target: &ArrowType) -> Result<ListArray> {
    let element = match array.data_type() {
        ArrowType::List(_) => return Ok(array.as_list::<i32>().clone()),
        ArrowType::LargeList(f)
        | ArrowType::FixedSizeList(f, _)
        | ArrowType::ListView(f)
        | ArrowType::LargeListView(f) => f.clone(),
        other => return Err(mismatch(path, other, target)),
    };
    let list = cast_leaf_nested(array, &ArrowType::List(element), path)?;
    Ok(list.as_list::<i32>().clone())
}

/// `cast` for the list shapes `as_list` reshapes (no value changes: only offsets).
fn cast_leaf_nested(array: &ArrayRef, target: &ArrowType, path: &str) -> Result<ArrayRef> {
    let options = CastOptions {
        safe: false,
        ..CastOptions::default()
    };
    cast_with_options(array, target, &options).map_err(|e| Error::InvalidColumnData {
        column: path.to_string(),
        reason: format!("cannot convert {} to {target}: {e}", array.data_type()),
    })
}

fn conform_list(array: &ArrayRef, element: &FieldRef, path: &str) -> Result<ArrayRef> {
    let target = ArrowType::List(element.clone());
    let list = as_list(array, path, &target)?;
    let child_path = format!("{path}.element");
    let values = conform(list.values(), element.data_type(), &child_path)?;
    let offsets = list.offsets();
    let (first, last) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    check_required(
        element,
        values.slice(first, last - first).as_ref(),
        None,
        &child_path,
    )?;
    Ok(Arc::new(ListArray::try_new(
        element.clone(),
        offsets.clone(),
        values,
        list.nulls().cloned(),
    )?))
}

fn conform_map(array: &ArrayRef, entries: &FieldRef, sorted: bool, path: &str) -> Result<ArrayRef> {
    let target = ArrowType::Map(entries.clone(), sorted);
    let (Some(map), ArrowType::Struct(kv)) = (array.as_map_opt(), entries.data_type()) else {
        return Err(mismatch(path, array.data_type(), &target));
    };
    let [key_field, value_field] = &kv.iter().cloned().collect::<Vec<_>>()[..] else {
        return Err(mismatch(path, array.data_type(), &target));
    };
    let keys = conform(map.keys(), key_field.data_type(), &format!("{path}.key"))?;
    let values = conform(
        map.values(),
        value_field.data_type(),
        &format!("{path}.value"),
    )?;
    let offsets: &OffsetBuffer<i32> = map.offsets();
    let (first, last) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
    check_required(
        key_field,
        keys.slice(first, last - first).as_ref(),
        None,
        &format!("{path}.key"),
    )?;
    check_required(
        value_field,
        values.slice(first, last - first).as_ref(),
        None,
        &format!("{path}.value"),
    )?;
    let entries_array = StructArray::try_new(kv.clone(), vec![keys, values], None)?;
    Ok(Arc::new(MapArray::try_new(
        entries.clone(),
        offsets.clone(),
        entries_array,
        map.nulls().cloned(),
        sorted,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int64Array, StringArray};

    fn field(name: &str, ty: ArrowType, nullable: bool) -> Field {
        Field::new(name, ty, nullable)
    }

    #[test]
    fn structs_match_fields_by_name_and_fill_missing_nullable_ones() {
        let source: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(field("b", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
        )]));
        let target = ArrowType::Struct(Fields::from(vec![
            field("a", ArrowType::Utf8, true),
            field("b", ArrowType::Int64, true),
        ]));
        let out = conform(&source, &target, "s").unwrap();
        assert_eq!(out.data_type(), &target);
        let s = out.as_struct();
        assert_eq!(s.column(0).null_count(), 2);
        let b = s.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![Some(1), None]);
    }

    #[test]
    fn required_fields_and_overflow_are_errors_that_name_the_field() {
        let source: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(field("b", ArrowType::Int64, true)),
            Arc::new(Int64Array::from(vec![Some(1), None])) as ArrayRef,
        )]));
        let required = ArrowType::Struct(Fields::from(vec![field("b", ArrowType::Int64, false)]));
        let e = conform(&source, &required, "s").unwrap_err().to_string();
        assert!(e.contains("\"s.b\"") && e.contains("NOT NULL"), "{e}");
        let narrow = ArrowType::Struct(Fields::from(vec![field("b", ArrowType::Int32, true)]));
        let big: ArrayRef = Arc::new(StructArray::from(vec![(
            Arc::new(field("b", ArrowType::Int64, true)),
            Arc::new(Int64Array::from(vec![i64::MAX])) as ArrayRef,
        )]));
        let e = conform(&big, &narrow, "s").unwrap_err().to_string();
        assert!(e.contains("\"s.b\"") && e.contains("cannot convert"), "{e}");
        let extra = ArrowType::Struct(Fields::from(vec![field("c", ArrowType::Int64, true)]));
        let e = conform(&source, &extra, "s").unwrap_err().to_string();
        assert!(e.contains("field \"b\""), "{e}");
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        let e = conform(&strings, &narrow, "s").unwrap_err().to_string();
        assert!(e.contains("table's shape"), "{e}");
    }

    #[test]
    fn lists_take_the_element_field_of_the_table() {
        let source: ArrayRef = Arc::new(ListArray::from_iter_primitive::<
            arrow_array::types::Int32Type,
            _,
            _,
        >(vec![Some(vec![Some(1), Some(2)]), None]));
        let element = Arc::new(field("element", ArrowType::Int64, false));
        let target = ArrowType::List(element);
        let out = conform(&source, &target, "l").unwrap();
        assert_eq!(out.data_type(), &target);
        let with_null: ArrayRef = Arc::new(ListArray::from_iter_primitive::<
            arrow_array::types::Int32Type,
            _,
            _,
        >(vec![Some(vec![Some(1), None])]));
        let e = conform(&with_null, &target, "l").unwrap_err().to_string();
        assert!(e.contains("\"l.element\""), "{e}");
    }
}
