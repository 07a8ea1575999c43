"""Every function of the standard-library interface (the shared STDLIB_API.md) resolves under its
module path: a program importing each name elaborates. The file-system helpers of std::io are out
of scope for compiled programs (STDLIB_API.md says so) and are not listed."""
import pytest

from einc.driver import front_end

# module -> the names STDLIB_API.md lists for it (its own functions and its re-exports)
INTERFACE = {
    "std::array": "flatten transpose sum concatenate argmax argmin argmax_all argmin_all partition partition_2d topk_extract topk_with_indices_extract",
    "std::io": "load_npy save_npy",
    "std::math": "deg_to_rad rad_to_deg clip",
    "std::math::basic": "abs sqrt min max sign pow floor ceil round trunc fmod mod gcd lcm factorial square neg reciprocal",
    "std::math::clamp": "clamp clamp_min clamp_max saturate",
    "std::math::constants": "pi e tau phi sqrt2 sqrt3 ln2 ln10 log2e log10e infinity nan epsilon max_float min_float",
    "std::math::exp": "exp",
    "std::math::hyperbolic": "tanh sinh cosh asinh acosh atanh",
    "std::math::log": "log ln log10 log2 log1p expm1 rsqrt",
    "std::math::special": "erf",
    "std::math::sum": "sum",
    "std::math::trig": "sin cos tan asin acos atan atan2",
    "std::math_utils": "max min clamp sign",
    "std::ml": "conv conv_transpose depthwise_conv qconv max_pool average_pool global_average_pool global_max_pool lp_pool max_roi_pool batch_normalization instance_normalization layer_normalization lrn lp_normalization mean_variance_normalization relu sigmoid softmax log_softmax leaky_relu elu elu_alpha gelu swish selu softplus hardtanh relu6 prelu celu gelu_tanh mish softsign tanhshrink softshrink hardshrink threshold hardswish thresholded_relu hardsigmoid linear gemm conv2d add subtract multiply divide power square neg abs sign min max reciprocal sqrt rsqrt exp log log1p expm1 floor ceil round clip mod fmod sin cos tan tanh sinh cosh atan2 erf is_nan is_inf einsum equal greater greater_or_equal less less_or_equal not_equal not logical_and logical_or logical_xor logical_not reduce_mean reduce_sum reduce_max reduce_min reduce_l1 reduce_l2 reduce_sum_square reduce_log_sum reduce_log_sum_exp reduce_prod matmul batch_matmul vec_norm_2 matrix_norm_frobenius cholesky solve_triangular_lower solve_triangular_lower_unit solve_triangular_upper solve_cholesky where identity constant dropout l2_normalize numel size cast slice cumsum quantize_linear dequantize_linear qmatmul qlinear image_scaler eye diag_extract diag_construct trace frobenius_norm outer kron tril triu roll repeat_interleave flip cross_entropy_loss mse_loss mae_loss huber_loss binary_cross_entropy softmax_cross_entropy_loss cosine_similarity gather gather_elements scatter_elements onehot gather_nd scatter scatter_nd pad depth_to_space space_to_depth range constant_of_shape concat tile transpose flatten reshape squeeze unsqueeze split expand shape resize upsample topk nonzero argmax argmin rnn lstm gru attention_dummy multi_head_attention_simple multi_head_attention asin acos atan asinh acosh atanh",
    "std::ml::activations": "relu sigmoid softmax log_softmax leaky_relu elu gelu swish selu softplus hardtanh relu6 prelu elu_alpha celu gelu_tanh softsign tanhshrink softshrink hardshrink threshold hardswish thresholded_relu hardsigmoid mish",
    "std::ml::attention_ops": "attention_dummy multi_head_attention_simple multi_head_attention",
    "std::ml::comparison_ops": "equal greater greater_or_equal less less_or_equal not_equal not",
    "std::ml::conv_ops": "qconv conv conv_transpose depthwise_conv",
    "std::ml::indexing_ops": "gather gather_elements scatter_elements onehot gather_nd scatter scatter_nd",
    "std::ml::layers": "linear gemm conv2d",
    "std::ml::linalg_ops": "vec_norm_2 matrix_norm_frobenius cholesky solve_triangular_lower solve_triangular_lower_unit solve_triangular_upper solve_cholesky lu solve matmul batch_matmul",
    "std::ml::logical_ops": "logical_and logical_or logical_xor logical_not",
    "std::ml::math_ops": "add subtract multiply divide rsqrt abs sign sqrt floor ceil round min max square neg reciprocal power fmod mod clip log1p expm1 exp log",
    "std::ml::ml_ex": "image_scaler eye diag_extract diag_construct trace frobenius_norm outer kron tril triu roll repeat_interleave flip cross_entropy_loss mse_loss mae_loss huber_loss binary_cross_entropy softmax_cross_entropy_loss cosine_similarity",
    "std::ml::norm_ops": "batch_normalization instance_normalization layer_normalization lrn lp_normalization mean_variance_normalization",
    "std::ml::pool_ops": "max_pool average_pool global_average_pool global_max_pool lp_pool max_roi_pool",
    "std::ml::recurrent_ops": "rnn lstm gru",
    "std::ml::reduction_ops": "reduce_mean reduce_sum reduce_max reduce_min reduce_l1 reduce_l2 reduce_sum_square reduce_log_sum reduce_log_sum_exp reduce_prod",
    "std::ml::resize_ops": "resize upsample",
    "std::ml::selection_ops": "topk_1d_helper topk nonzero argmax argmin",
    "std::ml::shape_ops": "reshape squeeze unsqueeze split expand shape",
    "std::ml::special_ops": "is_nan is_inf einsum erf",
    "std::ml::transform_ops": "pad depth_to_space space_to_depth range constant_of_shape concat tile transpose flatten",
    "std::ml::trig_ops": "sin cos tan tanh sinh cosh atan2",
    "std::ml::utility_ops": "where identity constant dropout l2_normalize numel size cast slice quantize_linear dequantize_linear qmatmul qlinear cumsum",
    "std::numerics::dp": "expected_value_at_state discounted_return bellman_step value_iteration bellman_residual",
    "std::numerics::ode": "euler_decay_step euler_decay midpoint_decay_step midpoint_decay rk4_decay_step rk4_decay euler_linear_step euler_linear",
    "std::numerics::optim": "quadratic_value_2d quadratic_gradient_2d gradient_descent_step_2d gradient_descent_2d gradient_descent_2d_from quadratic_residual_norm_2d least_squares_slope_intercept",
}

# std::math re-exports its submodules
MATH_SUBMODULES = ("basic", "trig", "hyperbolic", "log", "special", "constants", "sum", "exp", "clamp")


def imports() -> list[str]:
    lines = [f"use {module}::{name} as f{k}_{name};"
             for k, (module, names) in enumerate(INTERFACE.items()) for name in names.split()]
    lines += [f"use std::math::{name} as m_{name};"
              for sub in MATH_SUBMODULES for name in INTERFACE[f"std::math::{sub}"].split()]
    return lines


def test_every_interface_name_resolves(tmp_path):
    path = tmp_path / "interface.ein"
    path.write_text("\n".join(imports()) + "\nlet x = m_pi() * 2.0;\n")
    front_end(str(path))          # raises E010 naming the first missing item


def test_a_missing_name_would_be_reported(tmp_path):
    from einc.diagnostics import CompileError
    path = tmp_path / "missing.ein"
    path.write_text("use std::ml::recurrent_ops::rnn_cell;\nlet x = 1;\n")
    with pytest.raises(CompileError) as info:
        front_end(str(path))
    assert info.value.diagnostics[0].code == "E010"
