resource {
  body = {}
}
