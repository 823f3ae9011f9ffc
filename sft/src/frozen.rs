//! `x · W` for a frozen weight `W`, whose backward pass computes only the gradient of `x`.
//!
//! candle's matmul backward always computes both operands' gradients, and keeps them until the
//! pass ends: for a frozen base model that is every weight's size in wasted products and
//! memory per example (540 MB for SmolLM2's f32 weights, another 113 MB for the tied output
//! head). This operation holds `W` itself, so candle sees only `x` as its input. On the CPU it
//! runs the same matrix product; other devices fall back to candle's matmul.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, Layout, Shape, Storage, Tensor};

use crate::error::Result;

/// `x` (`[rows, in]`) times the frozen `w_t` (`[in, out]`).
pub(crate) fn frozen_matmul(x: &Tensor, w_t: &Tensor) -> Result<Tensor> {
    if !x.device().is_cpu() {
        return Ok(x.matmul(w_t)?);
    }
    Ok(x.contiguous()?
        .apply_op1(FrozenMatmul { w_t: w_t.clone() })?)
}

/// The operation: its weight is part of it, not an input.
struct FrozenMatmul {
    w_t: Tensor,
}

impl CustomOp1 for FrozenMatmul {
    fn name(&self) -> &'static str {
        "frozen-matmul"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (rows, inner) = layout.shape().dims2()?;
        let (w_inner, columns) = self.w_t.dims2()?;
        if inner != w_inner {
            candle_core::bail!("frozen matmul: x has {inner} columns, the weight {w_inner} rows");
        }
        let (w_storage, w_layout) = self.w_t.storage_and_layout();
        let Storage::Cpu(w) = &*w_storage else {
            candle_core::bail!("frozen matmul: the weight is not on the CPU");
        };
        let product = storage.matmul(w, (1, rows, columns, inner), layout, w_layout)?;
        Ok((product, Shape::from((rows, columns))))
    }

    fn bwd(
        &self,
        _x: &Tensor,
        _product: &Tensor,
        grad: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        Ok(Some(grad.matmul(&self.w_t.t()?)?))
    }
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Var};

    use super::*;

    #[test]
    fn same_product_and_input_gradient_as_matmul() {
        let device = Device::Cpu;
        let x = Var::from_tensor(
            &Tensor::arange(0f32, 12.0, &device)
                .unwrap()
                .reshape((3, 4))
                .unwrap(),
        )
        .unwrap();
        let w_t = (Tensor::arange(0f32, 20.0, &device)
            .unwrap()
            .reshape((4, 5))
            .unwrap()
            / 7.0)
            .unwrap();
        let ours = frozen_matmul(x.as_tensor(), &w_t).unwrap();
        let theirs = x.as_tensor().matmul(&w_t).unwrap();
        let values = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(values(&ours), values(&theirs));
        let weights = Tensor::arange(0f32, 15.0, &device)
            .unwrap()
            .reshape((3, 5))
            .unwrap();
        let ours = (ours * &weights)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let theirs = (theirs * &weights)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let grad = |g: &candle_core::backprop::GradStore| values(g.get(x.as_tensor()).unwrap());
        assert_eq!(grad(&ours), grad(&theirs));
        assert!(
            ours.get(&w_t).is_none(),
            "no gradient kept for the frozen weight"
        );
        assert!(theirs.get(&w_t).is_some());
    }
}
