//! Iceberg values as Arrow arrays, for the metadata tables: a column of partition values or
//! of bounds, one literal (or null) per row, typed as `iceberg`'s Arrow conversion types it.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Decimal128Array, Float32Array, Float64Array, Int32Array,
    Int64Array, StringArray,
};
use iceberg::spec::{PrimitiveLiteral as L, PrimitiveType, Type};

use crate::error::{Error, Result};

/// The Arrow type of an Iceberg primitive type, as `iceberg` converts it.
pub(crate) fn arrow_type(ty: &PrimitiveType) -> Result<arrow_schema::DataType> {
    iceberg::arrow::type_to_arrow_type(&Type::Primitive(ty.clone()))
        .map_err(|e| Error::corrupt("<table schema>", e.to_string()))
}

/// One array of `ty` from literals; a missing literal, or one of another kind than `ty`
/// stores (a bound `iceberg` could not decode), is null.
pub(crate) fn literal_array(ty: &PrimitiveType, values: &[Option<&L>]) -> Result<ArrayRef> {
    fn each<T>(values: &[Option<&L>], f: impl Fn(&L) -> Option<T>) -> Vec<Option<T>> {
        values.iter().map(|v| v.and_then(&f)).collect()
    }
    let target = arrow_type(ty)?;
    let array: ArrayRef = match ty {
        PrimitiveType::Boolean => Arc::new(BooleanArray::from(each(values, |v| match v {
            L::Boolean(b) => Some(*b),
            _ => None,
        }))),
        PrimitiveType::Int | PrimitiveType::Date => {
            Arc::new(Int32Array::from(each(values, |v| match v {
                L::Int(i) => Some(*i),
                _ => None,
            })))
        }
        PrimitiveType::Long
        | PrimitiveType::Time
        | PrimitiveType::Timestamp
        | PrimitiveType::Timestamptz
        | PrimitiveType::TimestampNs
        | PrimitiveType::TimestamptzNs => Arc::new(Int64Array::from(each(values, |v| match v {
            L::Long(i) => Some(*i),
            _ => None,
        }))),
        PrimitiveType::Float => Arc::new(Float32Array::from(each(values, |v| match v {
            L::Float(f) => Some(f.0),
            _ => None,
        }))),
        PrimitiveType::Double => Arc::new(Float64Array::from(each(values, |v| match v {
            L::Double(f) => Some(f.0),
            _ => None,
        }))),
        PrimitiveType::Decimal { .. } => Arc::new(
            Decimal128Array::from(each(values, |v| match v {
                L::Int128(i) => Some(*i),
                _ => None,
            }))
            .with_data_type(target.clone()),
        ),
        PrimitiveType::String => Arc::new(StringArray::from(each(values, |v| match v {
            L::String(s) => Some(s.clone()),
            _ => None,
        }))),
        PrimitiveType::Uuid => {
            let bytes = each(values, |v| match v {
                L::UInt128(u) => Some(u.to_be_bytes().to_vec()),
                _ => None,
            });
            Arc::new(BinaryArray::from_iter(bytes))
        }
        PrimitiveType::Fixed(_) | PrimitiveType::Binary => {
            Arc::new(BinaryArray::from_iter(each(values, |v| match v {
                L::Binary(b) => Some(b.clone()),
                _ => None,
            })))
        }
    };
    if array.data_type() == &target {
        return Ok(array);
    }
    Ok(arrow_cast::cast(&array, &target)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, TimestampMicrosecondType};

    #[test]
    fn literals_take_the_arrow_type_iceberg_gives_their_column() {
        let day = L::Int(19_000);
        let a = literal_array(&PrimitiveType::Date, &[Some(&day), None]).unwrap();
        assert_eq!(a.as_primitive::<Date32Type>().value(0), 19_000);
        assert!(a.is_null(1));

        let at = L::Long(1_700_000_000_000_000);
        let a = literal_array(&PrimitiveType::Timestamptz, &[Some(&at)]).unwrap();
        assert_eq!(
            a.as_primitive::<TimestampMicrosecondType>().value(0),
            1_700_000_000_000_000
        );
        assert!(matches!(
            a.data_type(),
            arrow_schema::DataType::Timestamp(_, Some(_))
        ));

        let uuid = L::UInt128(1);
        let a = literal_array(&PrimitiveType::Uuid, &[Some(&uuid)]).unwrap();
        assert_eq!(a.as_fixed_size_binary().value(0)[15], 1);

        // A literal of another kind than the type (an undecodable bound) is null.
        let wrong = L::String("1".into());
        let a = literal_array(&PrimitiveType::Int, &[Some(&wrong)]).unwrap();
        assert!(a.is_null(0));

        let cents = L::Int128(12_345);
        let ty = PrimitiveType::Decimal {
            precision: 10,
            scale: 2,
        };
        let a = literal_array(&ty, &[Some(&cents)]).unwrap();
        assert_eq!(
            a.as_primitive::<arrow_array::types::Decimal128Type>()
                .value(0),
            12_345
        );
        assert_eq!(a.data_type(), &arrow_schema::DataType::Decimal128(10, 2));
    }
}
