"""Dense forms of GPU targets: named ops reshaped so that the target's codegen can tile them."""
