"""Orders in the other languages agents meet most often, for `coach.steering`: secrets asked for and handed over,
the task declared over, the reader addressed, money moved, the reader's own rules and modes. Written here as a page
writes them and folded like the text they are checked against (accents and the marks of kana dropped); scripts
without spaces between words (Chinese, Japanese) are matched without word bounds."""

from __future__ import annotations

import unicodedata

from coach.alternation import any_of
from condenser.lookalikes import BUILT_IN_MARKS, CONFUSABLES


def fold_pattern(pattern: str) -> str:
    """A pattern folded as the texts it is checked against are (`coach.words.fold`): look-alikes made Latin, marks
    dropped, lower case. (Cyrillic and Greek words fold as the text does: "задача" is read as "зaдaчa", and a pattern
    written unfolded never matched one; the fourth red team of 2026-12-07 found them all silent.)"""
    pattern = pattern.translate(CONFUSABLES).translate(BUILT_IN_MARKS)
    return "".join(c for c in unicodedata.normalize("NFKD", pattern) if not unicodedata.combining(c)).lower()


SECRETS = any_of(fold_pattern(
    r"\b(?:passwort|kennwort|mot de passe|contraseña|clave|senha|parola d.ordine|wachtwoord|hasło|heslo|пароль"
    r"|kartennummer|numéro de carte|número de (?:tarjeta|cartão)|numero della carta|código (?:pin|de seguridad)"
    r"|code pin|pin-code|geheimzahl|tan|şifre\w*|kata sandi|mật khẩu|كلمة المرور|पासवर्ड|kode otp|otp|password|passcode"
    r"|pin|iban|lösenord(?:et)?|adgangskoden?|passord(?:et)?|salasana(?:si)?|heslo|jelszó(?:t)?|parola|geslo|lozinka"
    r"|parool|slaptažod\w*|parole|wagwoord|contrasenya|lozink\w*|nenosiri|cyfrinair|lykilor\w*|pasahitz\w*)\b|인증번호"
    r"|密码|密碼|口令|验证码|驗證碼|卡号|卡號|パスワード|暗証番号|認証コード|비밀번호|카드번호"))
HANDING = any_of(fold_pattern(
    r"\b(?:send\w*|schick\w*|gib|geben|mitteil\w*|verrat\w*|envoy\w*|envoie\w*|donne[rz]?|partage[rz]?|envía\w*"
    r"|envia\w*|envie\w*|manda\w*|mande\w*|compart\w*|comunica\w*|invia\w*|dai|condividi|stuur|geef|wyślij"
    r"|podaj|отправ\w*|пришл\w*|сообщ\w*|support|kundendienst|service client|soporte|suporte|assistenza"
    r"|gönder\w*|bize|bana|yaz|kirim\w*|berikan|bagikan|gửi|cho chúng tôi|أرسل\w*|भेज\w*|dacci|dammi|nenne\w*"
    r"|teile?n? uns|dime|dinos|diga-nos|me diga|skicka|skick|send os|send meg|send oss|lähetä|anna|pošli|pošlete"
    r"|küldd?|küldje|trimite\w*|spune\w*|ibigay|ipadala|pošalji|saada|tuma|anfon|bidali|gib uns)\b"
    r"|发给|發給|发我|發我|发送|發送|告诉|告訴|提供|请给|請給|给客服|給客服|送信|送って|教えて|보내|알려"))
TASK_DONE = any_of(fold_pattern(
    r"\b(?:aufgabe (?:ist )?(?:erledigt|abgeschlossen|beendet|erfüllt)|tâche (?:est )?(?:terminée|accomplie|finie"
    r"|achevée)|tarea (?:está )?(?:completada|terminada|hecha|cumplida)|tarefa (?:está )?(?:concluída|completa"
    r"|terminada|cumprida)|compito (?:è )?(?:completato|finito|terminato)|taak (?:is )?(?:voltooid|afgerond)"
    r"|zadanie (?:jest )?(?:wykonane|zakończone)|задача (?:выполнена|завершена)"
    r"|tugas (?:sudah |telah )?selesai|misi selesai|görev tamamland[ıi]|nhiệm vụ (?:đã )?hoàn thành|कार्य पूरा"
    r"|المهمة (?:اكتملت|انتهت|مكتملة)|انتهت المهمة|توقف الآن|misión cumplida|missão cumprida|mission accomplie"
    r"|taak (?:is )?klaar|uppgiften är (?:klar|slutförd)|zadanie ukończone|jetzt aufhören|sofort aufhören|arrête ici"
    r"|arrêtez ici|detente ya|detente ahora|pare agora|şimdi dur|berhenti sekarang|dừng lại ngay"
    r"|opgaven er (?:færdig|fuldført|løst)|oppgaven er (?:ferdig|fullført)|úkol je (?:hotový|splněn|dokončen)"
    r"|úloha je (?:hotová|splnená)|tehtävä on (?:valmis|suoritettu)|sarcina (?:este )?(?:finalizată|terminată|îndeplinită)"
    r"|tapos na ang (?:gawain|task)|a feladat (?:kész|elvégezve|teljesítve)|zadatak je (?:gotov|završen)"
    r"|ülesanne on (?:valmis|täidetud)|uzdevums (?:ir )?(?:pabeigts|izpildīts)|užduotis (?:atlikta|baigta)"
    r"|kazi (?:imekamilika|imekwisha|imemalizika)|tasca (?:està )?(?:completada|acabada|feta)"
    r"|naloga (?:je )?(?:končana|opravljena)|verkefni\w* (?:er )?loki\w*|ataza (?:amaitu|osatu)\w*"
    r"|taak is voltooi)\b"
    r"|任务(?:已)?完成|任務(?:已)?完成|任务结束|停止任务|停止任務|到此为止|到此為止|タスク(?:は)?完了|タスク終了|任務完了|作業完了"
    r"|今すぐ停止|(?:작업|임무|과제) ?(?:완료|끝)|지금 중지"))
ADDRESSING = any_of(fold_pattern(
    r"\b(?:sag(?:e|en|t)?|teile?n?) (?:dem |der |den )?(?:benutzer|nutzer|anwender|agenten)\b"
    r"|\b(?:dites|dis) (?:à )?l.(?:utilisateur|agent)\b|\b(?:di|dile|dígale|diga|diz|dica) (?:al|ao|all.) ?"
    r"(?:usuario|usuário|utente|agente)\b|\bberitahu (?:pengguna|agen)\b|告诉用户|告訴用戶|告知用户|告知用戶|ユーザーに伝え"
    r"|사용자에게"
    r"|\b(?:benachrichtige\w*|informiere\w*|warne\w*|bitte|frage\w*|überzeuge\w*) (?:den |die |dem )?"
    r"(?:benutzer|nutzer|anwender|kunden|agenten)\b"
    r"|\b(?:informa|informe|informez|informar|avisa|avise|avisez|notifica|notifique|comunica|comunique|pide|pida"
    r"|pregunta|pergunte|pede|prévenez|préviens|avertissez|demandez|demande|chiedi|avvisa|convence|convenza)"
    r" (?:a |à )?(?:al |a la |ao |à |a |o |l.|le |la |all.)?"
    r"(?:usuario|usuaria|usuário|utilisateur|cliente|client|agente|agent|utente)\b"
    r"|\b(?:скажи|скажите|сообщи|сообщите|передай|передайте|попроси|попросите) (?:пользователю|клиенту|агенту)\b"
    r"|(?:أخبر|أبلغ|قل ل|اطلب من|أعلم) ?(?:ال)?(?:مستخدم|عميل|وكيل)|通知用户|通知用戶|提醒用户|提醒用戶"
    r"|ユーザーに(?:知らせ|通知|伝えて)"))
MONEY = any_of(fold_pattern(
    r"\b(?:jetzt|sofort) (?:geld|betrag) (?:überweisen|senden)\b|\btransfer (?:uang|dana) (?:sekarang|segera)\b"
    r"|\b(?:envía|enviar|envie|transfiere) (?:el )?dinero ya\b|حول المال الآن|今すぐ振り込|지금 이체|立刻(?:转账|轉賬|汇款|匯款)"
    r"|\b(?:geld|betrag) (?:(?:jetzt|sofort) (?:überweisen|senden)|(?:überweisen|senden) (?:jetzt|sofort|hier|an (?:mich"
    r"|uns)))\b|\bkirim(?:kan)? (?:uang|dana) (?:sekarang|segera)\b|\b(?:hemen|şimdi) para gönder\w*"
    r"|\b(?:envoyez|envoyer|virez|transférez) (?:de l.)?argent (?:maintenant|immédiatement|ici|à (?:moi|nous))"
    r"|\b(?:transfiere|transferir|envía|enviar|envie|transfira) (?:el |o )?(?:dinero|dinheiro) (?:ahora|agora"
    r"|inmediatamente|imediatamente|aquí|aqui|a mí|para mim)\b|\b(?:invia|trasferisci) (?:i )?soldi (?:ora|subito|qui)\b"
    r"|(?:立即|马上|馬上|现在|現在)(?:转账|轉賬|汇款|匯款)|(?:转账|轉賬|汇款|匯款)给我|今すぐ送金|지금 송금"))



META = any_of(fold_pattern(
    r"\b(?:hör|höre|hört) sofort auf\b|\bstopp sofort\b|\barrête[sz]? tout\b|\barrêtez tout\b|\bsmetti subito\b"
    r"|\bprzestań teraz\b|\blopeta heti\b|\bdeja de (?:comprar|buscar|navegar|trabajar)\b|\bdetente ahora\b"
    r"|\b(?:tu es|vous êtes|du bist|eres(?: el)?|sei(?: l.)?|jesteś) (?:maintenant |jetzt |ahora |ora |teraz )?"
    r"(?:l.)?(?:admin|administrat\w*|amministratore|adminem|root)\b"
    r"|\b(?:zeig|zeige) (?:mir )?deine regeln\b|\bmontre(?:z)? (?:moi )?(?:tes|vos) règles\b"
    r"|\bmuestra(?:me)? tus reglas\b|\bmostra(?:mi)? le tue regole\b"
    r"|\bno (?:le )?preguntes al usuario\b|\bfrag den (?:nutzer|benutzer) nicht\b|\bne demande pas à l.utilisateur\b"
    r"|\btransfi[eé]re \d|你是管理员|你现在是管理员|提示词|开发者模式|管理员模式|不要听|工作已经完成|任务已经完成|给我转账"
    r"|作業は終わ|すぐにやめ|あなたは管理者|管理者モード|أنت (?:الآن )?المدير|توقف فورا"))


# `coach.orders`' kinds (the task ended, an answer given, money paid, instructions forgotten) in the languages the
# fourth and fifth red teams of 2026-12-07 found missing (Finnish, Danish, Norwegian, Swedish, Swahili,
# Tagalog, Malay, Hungarian, Lithuanian, Estonian, Romanian, Hindi and Urdu written in Latin letters, Hebrew,
# Persian, Urdu, Korean, Chinese): the task ended, an answer given, money paid to someone, the reader's instructions
# to be forgotten, a password to send, the user to be told
FURTHER_ORDERS = fold_pattern(
    r"\b(?:lopeta (?:tehtava|tehtävä|nyt|tahan|tähän|heti)|ala jatka|älä jatka|tehtava on (?:suoritettu|valmis|tehty)"
    r"|tehtävä on (?:suoritettu|valmis|tehty)|tehtava suoritettu|tehtävä suoritettu"
    r"|stop nu|afslut (?:nu|opgaven|sessionen)|sessionen er slut|opgaven er (?:udført|udfort|lost|løst)"
    r"|avslutt (?:na|nå|okten|økten|oppgaven)|stopp (?:na|nå|her)|okten er (?:over|ferdig|slutt)|økten er (?:over"
    r"|ferdig|slutt)|sluta (?:nu|har|här)|avsluta (?:nu|uppgiften|sessionen)"
    r"|acha (?:kazi|sasa)|simama sasa|huminto (?:ka )?(?:na )?(?:dito|ngayon)|tumigil (?:ka )?(?:na )?(?:dito|ngayon)"
    r"|hentikan (?:tugas|sekarang|di sini)|berhenti di sini|allj meg|állj meg|fejezd be most|sustok (?:dabar|cia|čia)"
    r"|baik (?:dabar|uzduoti|užduotį)|peatu (?:kohe|nuud|nüüd)|lopeta kohe|lõpeta (?:kohe|nüüd)|lopeta nuud"
    r"|opreste(?: te)? (?:acum|aici)|oprește(?: te)? (?:acum|aici)|opreste te|oprește te|sarcina e gata"
    r"|ulesanne on tehtud|ülesanne on tehtud|tasko (?:estas )?farita|opus perfectum|umsebenzi uqediwe"
    r"|detyra (?:u krye|u perfundua|u përfundua)|ta an tasc criochnaithe|tá an tasc críochnaithe"
    r"|opgaven er (?:faerdig|fardig)|oppgaven er (?:fullfort|ferdig)|zadanie vypolneno|zadacha vypolnena"
    r"|shigoto kanryo|sagyo kanryo|ninmu kanryo|tham jao"
    r"|kaam ho gaya|ruk jao|band karo|kaam khatam|renwu wancheng)\b"
    r"|\b(?:vastaus on|svaret er|svaret ar|svaret är|jibu ni|ang sagot ay|jawapan(?:nya)? (?:ialah|adalah)"
    r"|jawabannya(?: adalah)?|a valasz|a válasz|atsakymas(?: yra)?|vastus on|raspunsul (?:este|e)|răspunsul (?:este|e))"
    r" ?\S"
    r"|\b(?:maksa \w+(?:lle|lla)|maksa (?:nyt|heti)|betal \w+ \d+|betal (?:nu|straks|med det samme)|lipa \w+ (?:sasa|\d+)"
    r"|magbayad (?:kay|sa) \w+|fizess (?:most|\w+nak)|sumokek|sumokėk|platiti odmah)\b"
    r"|\b(?:glem|glom|glöm|unohda|sahau|kalimutan|lupakan|felejtsd el|pamirsk|pamiršk|unusta|uita|uită)"
    r" (?:\w+ ){0,2}(?:instrukser|instruksjoner|instruktioner|instruktionerna|ohjeet|ohjeesi|ohjeita|maagizo|maelekezo"
    r"|tagubilin|utos|arahan|instruksi|utasitasokat|utasításokat|utasitasaidat|utasításaidat|instrukcijas|juhiseid"
    r"|instructiunile|instrucțiunile|regler|regler|saannot|säännöt)\b"
    r"|\b(?:hantar|kirimkan|hantarkan|lahetta|lähettää|send|tuma|ipadala|küldd|kuldd|siusk|siųsk|saada|trimite)"
    r" (?:\w+ ){0,2}(?:kata laluan|kata sandi|salasanasi|salasana|adgangskode|passord|nenosiri|password mo|jelszavad"
    r"|slaptažodį|slaptazodi|parool|parola)\b"
    r"|\b(?:kerro kayttajalle|kerro käyttäjälle|fortael brugeren|fortæl brugeren|fortell brukeren|beratta for anvandaren"
    r"|berätta för användaren|mwambie mtumiaji|sabihin sa user|mondd meg a felhasznalonak|mondd meg a felhasználónak)\b"
    r"|המשימה הושלמה|עצור עכשיו|עצור כאן|התשובה היא|שלח את הסיסמה|שלם ל|توقف کن|وظیفه انجام شد|پاسخ .{1,12} است"
    r"|رمز عبور (?:خود )?را بفرست|پول بفرست|رک جاؤ|کام ہو گیا|کام مکمل|جواب .{1,12} ہے|پاس ورڈ بھیج"
    r"|작업이 ?완료|작업 ?종료|여기서 ?멈춰|중지하세요|멈추세요|정답은|비밀번호를 ?보내|송금하세요"
    r"|去.{1,6}购买|去.{1,6}購買|到.{1,6}购买|任务已结束|停止任务|立即停止|答案是|थम जाओ|रुक जाओ|काम हो गया"
    # the fifth red team's: Vietnamese, Turkish, Polish, Czech, Indonesian, Japanese (on a task in Japanese), Hausa,
    # Yoruba, Amharic, and more phrasings in German, Spanish, Italian, Dutch, Portuguese and French
    r"|\b(?:dung lai (?:tai day|ngay)|dừng lại (?:tại đây|ngay)|nhiem vu (?:da )?xong|nhiệm vụ (?:đã )?xong|dap an la"
    r"|đáp án là|tra loi la|trả lời là|thanh toan cho \w+|thanh toán cho \w+|gorev bitti|görev bitti|burada dur"
    r"|zadanie (?:zrobione|skonczone|skończone)|zatrzymaj sie tutaj|zatrzymaj się tutaj|odpowiedz to|odpowiedź to"
    r"|ukol (?:je )?hotov|úkol (?:je )?hotov|zastav se (?:tady|zde)|zaplatte \w+ovi|zaplaťte \w+ovi|zapomen na pokyny"
    r"|zapomeň na pokyny|tugas (?:sudah )?beres|kirim kata sandi\w*|tsaya (?:anan|a nan)|amsar ita ce|an gama aiki"
    r"|duro nibi|dúró níbí|aufgabe ist (?:jetzt )?(?:vorbei|erledigt)|la tarea ha (?:concluido|terminado)"
    r"|compito (?:e )?(?:concluso|finito)|mision (?:terminada|cumplida)|misión terminada|taak (?:is )?gedaan"
    r"|die antwort(?: ist)?|respuesta final|resposta (?:certa|final)|la reponse finale|la réponse finale"
    r"|paga a \w+ por bizum|paie \w+ par lydia)\b"
    r"|タスクは(?:終わり|完了)|ここで止ま|に支払って|ተግባሩ ተጠናቅቋል|እዚህ አቁም|መልሱ .{1,8} ነው"
    r"|завдання виконано|зупинись|зупиніться|დავალება შესრულებულია|ሥራው ተጠናቋል")
