func.func @forward(%x: tensor<4x8xf32> {nn.input = "x"}) -> tensor<4x8xf32> {
  %0 = nn.softmax %x {axis = 5} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
