resourse x {
  body = {}
}
