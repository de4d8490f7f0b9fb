resource x {
  body = {}
  body = {}
}
