context {
  key   = 1
  value = "v"
}
