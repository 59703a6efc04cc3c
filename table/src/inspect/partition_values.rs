//! The `partition` column of the `files` and `partitions` metadata tables: each file's
//! partition tuple as a struct of the current spec's partition fields (Iceberg's unified
//! partition type, matched by partition field id, so that a file of an older spec shows its
//! values where the fields are the same and nulls elsewhere).

use std::sync::Arc;

use arrow_array::{ArrayRef, StructArray};
use arrow_schema::{Field, Fields};
use iceberg::spec::{Literal, PrimitiveLiteral, StructType, TableMetadata, Type};

use crate::error::Result;
use crate::inspect::values::literal_array;

/// The partition struct of a partitioned table's metadata tables.
pub(crate) struct PartitionValues<'a> {
    metadata: &'a TableMetadata,
    unified: &'a StructType,
}

impl<'a> PartitionValues<'a> {
    /// `None` for an unpartitioned table, whose metadata tables have no `partition` column
    /// (as in Iceberg).
    pub(crate) fn of(metadata: &'a TableMetadata) -> Option<Self> {
        let unified = metadata.default_partition_type();
        (!unified.fields().is_empty()).then_some(PartitionValues { metadata, unified })
    }

    /// The value of partition field `field_id` in a tuple of spec `spec_id`.
    fn value<'s>(
        &self,
        spec_id: i32,
        tuple: &'s iceberg::spec::Struct,
        field_id: i32,
    ) -> Option<&'s PrimitiveLiteral> {
        let spec = self.metadata.partition_spec_by_id(spec_id)?;
        let at = spec.fields().iter().position(|f| f.field_id == field_id)?;
        match tuple.fields().get(at)? {
            Some(Literal::Primitive(p)) => Some(p),
            _ => None,
        }
    }

    /// The `partition` column of `rows` (spec id and tuple of each row).
    pub(crate) fn column(&self, rows: &[(i32, &iceberg::spec::Struct)]) -> Result<ArrayRef> {
        let mut fields = Vec::with_capacity(self.unified.fields().len());
        let mut arrays = Vec::with_capacity(fields.capacity());
        for f in self.unified.fields() {
            let Type::Primitive(ty) = f.field_type.as_ref() else {
                continue;
            };
            let values: Vec<Option<&PrimitiveLiteral>> = rows
                .iter()
                .map(|(spec, tuple)| self.value(*spec, tuple, f.id))
                .collect();
            let array = literal_array(ty, &values)?;
            fields.push(Field::new(&f.name, array.data_type().clone(), true));
            arrays.push(array);
        }
        Ok(Arc::new(StructArray::try_new(
            Fields::from(fields),
            arrays,
            None,
        )?))
    }
}
