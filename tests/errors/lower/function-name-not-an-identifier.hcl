function "make.name" {
  body = 1
}
