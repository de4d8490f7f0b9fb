resource x {
  condition = true
}
