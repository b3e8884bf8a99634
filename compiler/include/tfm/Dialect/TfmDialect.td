//===- TfmDialect.td - The tfm dialect ---------------------*- tablegen -*-===//
//
// tfm models one transformer's forward pass. The builder emits the primitive
// ops; the pass pipeline groups them into fusion regions, outlines those into
// kernel functions, lays out the caches and plans every byte of memory.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TD
#define TFM_DIALECT_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let summary = "Transformer inference ops, fusion regions and kernel launches";
  let description = [{
    Activations, weights and token ids are value-semantic tensors.
    Activations are f32 and token ids i32; a weight's element type is the
    format the generated code reads it in, straight from the weight file:
    f32, f16, bf16 or one of GGUF's block formats (`!tfm.blocks<"q8_0">`). A tensor whose first dimension is "token rows" has one row per token
    of the call, and the row index is the token's absolute position; that is
    why no op takes a position operand. In prefill functions the token-row
    dimension is dynamic (`?`, bounded by the module's `tfm.prefill_chunk`),
    in decode functions it is 1.

    The KV cache is the one piece of state an entry point changes, so its
    layers are buffers: 2-D memrefs `[context, kv_dim]` (f32, f16 or bf16:
    keys and values are rounded to it when stored) named by module
    symbols (`tfm.cache_decl`). Their layout is the memref's: the identity
    (each position's row contiguous) or `strided<[1, context]>` (each
    dimension contiguous across positions), chosen by a pass. `tfm.kv_store`
    writes a cache, `tfm.attention` reads it, and both say so.

    The module carries what the generated driver needs besides the launches:
    `tfm.context_length`, `tfm.vocab_size`, `tfm.prefill_chunk`, the target
    (`tfm.target`, an explicit CPU feature list) and the config it was built
    from (`tfm.config`, canonical JSON); memory planning adds
    `tfm.kv_cache_bytes`.
  }];
  let cppNamespace = "::tfm";
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let useDefaultTypePrinterParser = 1;
}

class Tfm_Op<string mnemonic, list<Trait> traits = []> :
    Op<Tfm_Dialect, mnemonic, traits>;

/// An op that becomes part of a kernel. tfm-tblgen turns the ODS of every
/// such op into the op kinds and typed attribute structs of the MLIR-free
/// Program (tfm/Program/Program.h) and into their conversion from MLIR, so
/// that a new op is this ODS entry plus its record in the kernel registry
/// (compiler/lib/Kernels/OpRegistry.cpp).
class Tfm_KernelOp<string mnemonic, list<Trait> traits = []> :
    Tfm_Op<mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Traits the passes act on
//===----------------------------------------------------------------------===//

/// Computed row by row from the same rows of its operands: the epilogue pass
/// pulls it into the kernel that produces them.
def Tfm_Epilogue : NativeOpTrait<"Epilogue"> { let cppNamespace = "::tfm::OpTrait"; }

/// Normalises each row; the norm-linear pass fuses it with the projections
/// that read it, so the normalised rows never reach memory.
def Tfm_RowNormalization : NativeOpTrait<"RowNormalization"> {
  let cppNamespace = "::tfm::OpTrait";
}

/// Starts a kernel of its own when no norm precedes it (projections and the
/// embedding gather); epilogues then join it.
def Tfm_FusionRoot : NativeOpTrait<"FusionRoot"> { let cppNamespace = "::tfm::OpTrait"; }

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Tfm_BlocksType : TypeDef<Tfm_Dialect, "Blocks"> {
  let mnemonic = "blocks";
  let summary = "a weight element stored in one of GGUF's block formats";
  let description = [{
    The element type of a weight whose rows are cut into blocks of small
    integers with their scales, bit for bit as GGUF stores them
    (tfm/common/BlockQuant.h): "q8_0", "q4_0", "q4_k", "q5_k" or "q6_k".
    The tensor keeps its logical shape; each row's length is a whole number
    of blocks (32 values for q8_0 and q4_0, 256 for the k-quants). Kernels
    decode the values in registers, inside the matrix products.

    ```mlir
    tfm.weight_decl @"blk.0.attn_q.weight" : tensor<4096x4096x!tfm.blocks<"q4_k">>
    ```
  }];
  let parameters = (ins StringRefParameter<"the block format's name">:$format);
  let assemblyFormat = "`<` $format `>`";
  let genVerifyDecl = 1;
}

def Tfm_Rows : Type<CPred<"::tfm::isRowsType($_self)">,
    "2-D f32 tensor of rows with a static width", "::mlir::RankedTensorType">;
def Tfm_Matrix : Type<CPred<"::tfm::isStaticTensorType($_self, 2)">,
    "static 2-D weight tensor (f32, f16, bf16 or whole blocks of a block format)",
    "::mlir::RankedTensorType">;
def Tfm_Vector : Type<CPred<"::tfm::isStaticTensorType($_self, 1)">,
    "static 1-D weight tensor (f32, f16 or bf16)", "::mlir::RankedTensorType">;
def Tfm_Weight : Type<CPred<"::tfm::isStaticTensorType($_self, 1) || "
                            "::tfm::isStaticTensorType($_self, 2)">,
    "static 1-D or 2-D weight tensor", "::mlir::RankedTensorType">;
def Tfm_Tokens : Type<CPred<"::tfm::isTokensType($_self)">,
    "1-D i32 tensor of token ids", "::mlir::RankedTensorType">;
def Tfm_CacheBuffer : Type<CPred<"::tfm::isCacheBufferType($_self)">,
    "static 2-D f32, f16 or bf16 memref with an identity or strided<[1, rows]> layout",
    "::mlir::MemRefType">;
def Tfm_KernelValue : AnyTypeOf<[Tfm_Rows, Tfm_Weight, Tfm_Tokens, Tfm_CacheBuffer]>;

def Tfm_PositiveF64Attr : ConfinedAttr<F64Attr, [AttrConstraint<
    CPred<"::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() > 0.0">,
    "whose value is positive">]>;
def Tfm_PositiveI64Attr : ConfinedAttr<I64Attr, [IntPositive]>;
def Tfm_NonNegativeI64Attr : ConfinedAttr<I64Attr, [IntNonNegative]>;

#endif // TFM_DIALECT_TD
