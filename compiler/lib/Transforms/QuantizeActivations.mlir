// RUN: tfm-opt %s --split-input-file --tfm-quantize-activations | FileCheck %s --check-prefix=DEFAULT
// RUN: tfm-opt %s --split-input-file --tfm-quantize-activations=block=32 | FileCheck %s --check-prefix=INT8
// RUN: tfm-opt %s --split-input-file --tfm-quantize-activations=bf16=true | FileCheck %s --check-prefix=BF16

// The default keeps every input in f32. block=32 gives 8-bit inputs to the
// products with a block-format weight, of one row or many, in blocks of 32
// or of a k-quant's 256; a product of an f32 weight keeps f32 inputs. bf16=true rounds the inputs of the products
// with a bf16 weight to bf16, and of those alone.

// DEFAULT-LABEL: func.func @decode
// DEFAULT-NOT:     activation_block
// DEFAULT-NOT:     bf16_input
// INT8-LABEL:    func.func @decode
// INT8:            tfm.linear %{{.*}}, %{{.*}} {activation_block = 256 : i64} : tensor<1x256xf32>, tensor<16x256x!tfm.blocks<"q4_k">>
// INT8:            tfm.linear %{{.*}}, %{{.*}} : tensor<1x64xf32>, tensor<16x64xf32>
// INT8:            tfm.linear %{{.*}}, %{{.*}} {activation_block = 32 : i64} : tensor<?x64xf32>, tensor<16x64x!tfm.blocks<"q8_0">>
func.func @decode(%x: tensor<1x64xf32>, %x256: tensor<1x256xf32>, %rows: tensor<?x64xf32>,
                  %wq: tensor<16x256x!tfm.blocks<"q4_k">>,
                  %wf: tensor<16x64xf32>, %w8: tensor<16x64x!tfm.blocks<"q8_0">>)
    -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<?x16xf32>) {
  %a = tfm.linear %x256, %wq : tensor<1x256xf32>, tensor<16x256x!tfm.blocks<"q4_k">>
  %b = tfm.linear %x, %wf : tensor<1x64xf32>, tensor<16x64xf32>
  %c = tfm.linear %rows, %w8 : tensor<?x64xf32>, tensor<16x64x!tfm.blocks<"q8_0">>
  return %a, %b, %c : tensor<1x16xf32>, tensor<1x16xf32>, tensor<?x16xf32>
}

// -----

// BF16-LABEL: func.func @bf16_weights
// BF16:         tfm.linear %{{.*}}, %{{.*}} {bf16_input = true} : tensor<1x64xf32>, tensor<16x64xbf16>
// BF16:         tfm.linear %{{.*}}, %{{.*}} {bf16_input = true} : tensor<?x64xf32>, tensor<16x64xbf16>
// BF16:         tfm.linear %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<16x64xf16>
// BF16-NOT:     bf16_input
// BF16:         tfm.linear %{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<16x64x!tfm.blocks<"q8_0">>
// INT8-LABEL:   func.func @bf16_weights
// INT8-NOT:     bf16_input
func.func @bf16_weights(%x: tensor<1x64xf32>, %rows: tensor<?x64xf32>, %wb: tensor<16x64xbf16>,
                        %wh: tensor<16x64xf16>, %w8: tensor<16x64x!tfm.blocks<"q8_0">>)
    -> (tensor<1x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %a = tfm.linear %x, %wb : tensor<1x64xf32>, tensor<16x64xbf16>
  %b = tfm.linear %rows, %wb : tensor<?x64xf32>, tensor<16x64xbf16>
  %c = tfm.linear %rows, %wh : tensor<?x64xf32>, tensor<16x64xf16>
  %d = tfm.linear %rows, %w8 : tensor<?x64xf32>, tensor<16x64x!tfm.blocks<"q8_0">>
  return %a, %b, %c, %d : tensor<1x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}
