//===- TfmDialect.td - The tfm dialect ---------------------*- tablegen -*-===//
//
// tfm models one transformer's forward pass on value-semantic tensors. The
// builder emits the primitive ops; the pass pipeline groups them into fusion
// regions, outlines those into kernel functions and plans their memory.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TD
#define TFM_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tfm_Dialect : Dialect {
  let name = "tfm";
  let summary = "Transformer inference ops, fusion regions and kernel launches";
  let description = [{
    Ops on ranked f32 (activations, weights, caches) and i32 (token ids)
    tensors. A tensor whose first dimension is "token rows" has one row per
    token of the call, and the row index is the token's absolute position;
    that is why no op takes a position operand. In prefill functions the
    token-row dimension is dynamic (`?`, bounded by the prefill chunk), in
    decode functions it is 1.
  }];
  let cppNamespace = "::tfm";
}

// The KV cache is the only state an entry point mutates; attention reads it
// and kv_store writes it, so the two must never be reordered or merged.
def Tfm_KvCacheResource : Resource<"::tfm::KvCacheResource">;

def Tfm_CacheKind : I32EnumAttr<"CacheKind", "which half of a layer's KV cache", [
    I32EnumAttrCase<"Key", 0, "key">,
    I32EnumAttrCase<"Value", 1, "value">]> {
  let cppNamespace = "::tfm";
}

class Tfm_Op<string mnemonic, list<Trait> traits = []> :
    Op<Tfm_Dialect, mnemonic, traits>;

def Tfm_F32Tensor : RankedTensorOf<[F32]>;
def Tfm_TokenTensor : RankedTensorOf<[I32]>;
def Tfm_AnyTensor : RankedTensorOf<[F32, I32]>;

#endif // TFM_DIALECT_TD
