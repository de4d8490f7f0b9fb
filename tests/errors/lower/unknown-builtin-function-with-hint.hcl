resource x {
  body = { v = uper("a") }
}
