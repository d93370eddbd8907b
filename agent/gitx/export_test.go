package gitx

// SmallFile and BeforeOpen expose smallFile and its test hook.
var SmallFile = smallFile

func SetBeforeOpen(f func(string)) func() {
	old := beforeOpen
	beforeOpen = f
	return func() { beforeOpen = old }
}
