//! Which implementation a batch call runs: explicit SIMD or portable code.

use crate::Error;
use crate::arch::{Avx2, Bmi2};

/// The implementation behind batch encoding. [`Kernel::detect`] picks the fastest one the CPU
/// supports, which is what the curve constructors use; forcing [`Kernel::Portable`] exists for
/// tests and benchmarks that compare the paths. Every kernel returns bit-identical keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// Plain Rust: the 8-bit-tile lookup-table Hilbert encoder and magic-bit Morton interleave.
    Portable,
    /// x86-64 AVX2: 8-lane normalisation and parallel-prefix Hilbert encoding; Morton keys use
    /// BMI2 `pdep` when the CPU also has it.
    Avx2,
}

impl Kernel {
    /// The fastest kernel this CPU supports.
    pub fn detect() -> Kernel {
        if Avx2::detect().is_some() {
            Kernel::Avx2
        } else {
            Kernel::Portable
        }
    }

    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Portable => true,
            Kernel::Avx2 => Avx2::detect().is_some(),
        }
    }
}

/// The detected capabilities behind a [`Kernel`], held by every curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Accel {
    pub(crate) avx2: Option<Avx2>,
    pub(crate) bmi2: Option<Bmi2>,
}

impl Accel {
    pub(crate) fn new(kernel: Kernel) -> Result<Accel, Error> {
        match kernel {
            Kernel::Portable => Ok(Accel {
                avx2: None,
                bmi2: None,
            }),
            Kernel::Avx2 => match Avx2::detect() {
                Some(avx2) => Ok(Accel {
                    avx2: Some(avx2),
                    bmi2: Bmi2::detect(),
                }),
                None => Err(Error::KernelUnavailable { kernel }),
            },
        }
    }

    pub(crate) fn detect() -> Accel {
        Accel::new(Kernel::detect()).unwrap_or(Accel {
            avx2: None,
            bmi2: None,
        })
    }

    pub(crate) fn kernel(&self) -> Kernel {
        if self.avx2.is_some() {
            Kernel::Avx2
        } else {
            Kernel::Portable
        }
    }

    #[inline]
    pub(crate) fn normalize<const CHECK: bool>(
        &self,
        vs: &[f64],
        min: f64,
        max: f64,
        scale: f64,
        out: &mut [u32],
    ) -> bool {
        match self.avx2 {
            Some(avx2) => avx2.normalize::<CHECK>(vs, min, max, scale, out),
            None => crate::grid::normalize_portable::<CHECK>(vs, min, max, scale, out),
        }
    }
}
