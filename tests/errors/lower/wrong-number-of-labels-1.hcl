resource x y {
  body = {}
}
