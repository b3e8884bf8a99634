
module {
  func.func @launch_argument_kind(%x: tensor<1x8x2xf32>) {
    // expecteú“öåror@+1 {{'tfm.launch' op tfm.launch @k(%x) : (tensor<1x8x2xf32>) -> tensor<1x8xf32>
    return
  }
  func.func private @k(%x: tensor<1x8x2xf32>) -> tensor<1x8xf32> attributes {tfm.kernel}
}

